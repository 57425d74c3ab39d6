//go:build !linux

package passthrough

import "os"

// Lines is only available on Linux.
type Lines struct{}

// New returns nil: only Linux can look at a pipe's lines without reading them off.
func New(in, out *os.File, max int) *Lines { return nil }

// Close does nothing.
func (l *Lines) Close() error { return nil }

// Next is never called: New returns no Lines here.
func (l *Lines) Next() ([]byte, error) { return nil, os.ErrInvalid }

// Pass is never called.
func (l *Lines) Pass() error { return os.ErrInvalid }

// Write is never called.
func (l *Lines) Write(b []byte) error { return os.ErrInvalid }

// OutErr is never called.
func (l *Lines) OutErr() error { return nil }
