// Package natstest runs a real NATS server with JetStream inside a test: on loopback, on a
// port of its own, with its store in the test's temporary directory, stopped when the test
// ends. Restart stops it and starts it again on the same port and store, as an operator's
// restart would, so that tests can check what survives one.
package natstest

import (
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/fuseraft/fr/internal/testkit"
)

// Server is one embedded NATS server with JetStream.
type Server struct {
	t    testing.TB
	opts server.Options
	srv  *server.Server
}

// Start runs a server for the rest of the test. Options may change the defaults (loopback, a
// random port, JetStream with a file store under t.TempDir()) before it starts.
func Start(t testing.TB, options ...func(*server.Options)) *Server {
	t.Helper()
	s := &Server{t: t, opts: server.Options{
		Host:      "127.0.0.1",
		Port:      server.RANDOM_PORT,
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoSigs:    true,
		NoLog:     true,
	}}
	for _, o := range options {
		o(&s.opts)
	}
	s.start()
	// The first start chose the port: restarts keep it, so clients reconnect to the same URL.
	s.opts.Port = s.srv.Addr().(*net.TCPAddr).Port
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start() {
	s.t.Helper()
	opts := s.opts
	srv, err := server.NewServer(&opts)
	if err != nil {
		s.t.Fatalf("nats server: %v", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(testkit.Bound(20 * time.Second)) {
		srv.Shutdown()
		s.t.Fatalf("nats server not ready for connections within %v", testkit.Bound(20*time.Second))
	}
	s.srv = srv
}

// URL is the address clients connect to, nats://127.0.0.1:PORT.
func (s *Server) URL() string { return s.srv.ClientURL() }

// Server is the running engine, for tests that look inside it.
func (s *Server) Server() *server.Server { return s.srv }

// Stop shuts the server down and waits until it has.
func (s *Server) Stop() {
	if s.srv == nil {
		return
	}
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
	s.srv = nil
}

// Restart stops the server and starts it again on the same port with the same store.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}
