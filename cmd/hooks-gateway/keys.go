package main

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// keyPrefix marks gateway client keys, so secret scanners and people can
// tell them from provider keys.
const keyPrefix = "hgk_"

// runKeys serves `hooks-gateway keys new [--name N]` (a fresh key and the
// config entry holding its hash) and `hooks-gateway keys hash` (the hash
// of a key read on stdin).
func runKeys(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	usage := func() int {
		fmt.Fprintln(stderr, "usage: hooks-gateway keys new [--name NAME] | hooks-gateway keys hash < KEY")
		return 2
	}
	if len(args) == 0 {
		return usage()
	}
	switch args[0] {
	case "new":
		fl := flag.NewFlagSet("keys new", flag.ContinueOnError)
		fl.SetOutput(stderr)
		name := fl.String("name", "", "the key's name in the configuration (letters, digits, '_', '.', '-')")
		if err := fl.Parse(args[1:]); err != nil || fl.NArg() > 0 {
			return usage()
		}
		if *name != "" && !config.ValidKeyName(*name) {
			fmt.Fprintf(stderr, "hooks-gateway: keys new: --name must be 1 to 64 letters, digits, '_', '.' and '-' (got %q)\n", *name)
			return 2
		}
		key, err := newKey()
		if err != nil {
			fmt.Fprintf(stderr, "hooks-gateway: keys new: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "# The key: give it to the client, keep it nowhere else.\n%s\n", key)
		fmt.Fprintln(stdout, "# The entry for auth.api_keys or the key file (it holds only the hash):")
		if *name != "" {
			fmt.Fprintf(stdout, "- name: %s\n  sha256: %s\n", *name, hashKey(key))
		} else {
			fmt.Fprintf(stdout, "sha256: %s\n", hashKey(key))
		}
		return 0
	case "hash":
		if len(args) > 1 {
			return usage()
		}
		key, err := readKey(stdin)
		if err != nil {
			fmt.Fprintf(stderr, "hooks-gateway: keys hash: %v\n", err)
			return 2
		}
		fmt.Fprintf(stdout, "sha256: %s\n", hashKey(key))
		return 0
	}
	return usage()
}

// newKey returns hgk_ and 32 random bytes in unpadded base64url.
func newKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return keyPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

func hashKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// readKey reads the first line of r, without its line ending: the key
// exactly as a client sends it.
func readKey(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 64<<10)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	key := strings.TrimRight(line, "\r\n")
	if key == "" {
		return "", errors.New("no key on stdin")
	}
	return key, nil
}
