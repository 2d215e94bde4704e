module github.com/hooks-gateway/hooks-gateway

go 1.26

require github.com/gowebpki/jcs v1.0.2 // indirect
