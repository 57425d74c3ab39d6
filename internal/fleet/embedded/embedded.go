// Package embedded runs a NATS server with JetStream inside fr-worker's process (--embedded-nats).
// It is a package of its own so that only what runs a server links one.
package embedded

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// DefaultAddr is where --embedded-nats listens when given no address: loopback, on
// NATS's usual port.
const DefaultAddr = "127.0.0.1:4222"

// Server is a NATS server with JetStream running inside the process.
type Server struct {
	srv *server.Server
}

// Start runs a JetStream server on addr (HOST:PORT; port 0 picks a free one) with its
// file store under dir. It returns once the server takes connections.
func Start(addr, dir string) (*Server, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--embedded-nats %q is not HOST:PORT: %v", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return nil, fmt.Errorf("--embedded-nats %q: bad port", addr)
	}
	if p == 0 {
		p = server.RANDOM_PORT
	}
	if host == "" {
		host = "127.0.0.1"
	}
	opts := &server.Options{
		ServerName: "fr-embedded",
		Host:       host,
		Port:       p,
		JetStream:  true,
		StoreDir:   dir,
		NoSigs:     true,
		NoLog:      true,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server: %v", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("embedded NATS server on %s did not start (is the port taken?)", addr)
	}
	return &Server{srv: srv}, nil
}

// URL is the server's client URL.
func (e *Server) URL() string { return e.srv.ClientURL() }

// Shutdown stops the server and waits for it.
func (e *Server) Shutdown() {
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}
