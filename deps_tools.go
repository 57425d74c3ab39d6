//go:build deps

// This file pins the modules the toolkit's packages are being built on, so that go.mod keeps
// them while those packages land. It is never compiled.
package fr

import (
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/coder/websocket"
	_ "github.com/creack/pty"
	_ "github.com/itchyny/gojq"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "golang.org/x/term"
	_ "gopkg.in/yaml.v3"
	_ "mvdan.cc/sh/v3/syntax"
)
