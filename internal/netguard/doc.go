// Package netguard keeps a server answering when clients hold its sockets:
// a listener that caps the connections it hands out (with a small reserve
// kept for health and metrics probes), and a tracker of the handlers still
// running, so that a shutdown can wait for the ones it cut off.
package netguard
