package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fuseraft/fr/internal/cmdutil"
	"github.com/fuseraft/fr/pkg/wire"
)

// inputs expands the arguments into the files to read: a directory stands for the regular files
// in it (not those starting with "."), in name order; "-" and no argument at all are stdin.
func inputs(args []string) ([]string, error) {
	if len(args) == 0 {
		return []string{"-"}, nil
	}
	var out []string
	for _, a := range args {
		if a == "-" {
			out = append(out, a)
			continue
		}
		fi, err := os.Stat(a)
		if err != nil {
			return nil, cmdutil.Errorf(cmdutil.ExitUsage, "%v", err)
		}
		if !fi.IsDir() {
			out = append(out, a)
			continue
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			return nil, cmdutil.Errorf(cmdutil.ExitUsage, "%v", err)
		}
		var names []string
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() {
				continue
			}
			names = append(names, filepath.Join(a, e.Name()))
		}
		sort.Strings(names)
		if len(names) == 0 {
			return nil, cmdutil.Usagef("%s: no session files in the directory", a)
		}
		out = append(out, names...)
	}
	return out, nil
}

// read feeds every line of r to the builder. Lines that are not events are counted and skipped.
func (b *builder) read(name string, r io.Reader) error {
	b.r.Input.Files = append(b.r.Input.Files, name)
	rd := wire.NewReader(r, wire.ReaderOptions{})
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return cmdutil.Errorf(cmdutil.ExitFailed, "%s: %v", name, err)
		}
		b.r.Input.Lines++
		switch l.Kind {
		case wire.Noise:
			if len(l.Raw) > 0 {
				b.r.Input.Noise++
			}
		case wire.OtherJSON:
			b.r.Input.OtherJSON++
		default:
			ev, _ := l.Event()
			b.event(ev)
		}
	}
}

func readFile(b *builder, name string, stdin io.Reader) error {
	if name == "-" {
		return b.read("-", stdin)
	}
	f, err := os.Open(name)
	if err != nil {
		return cmdutil.Errorf(cmdutil.ExitUsage, "%v", err)
	}
	defer f.Close()
	if err := b.read(name, f); err != nil {
		return err
	}
	return nil
}

var _ = fmt.Sprintf

// readInputLog reads fr-stream --record-input's file: the lines sent to fuseraft. Each
// user_input with a text is a message of the person's, shown at the next turn of a chat
// (turn_start), which does not carry it; slash commands (a text starting with "/") start no
// turn and are left out, as are the answers to prompts.
func (b *builder) readInputLog(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return cmdutil.Usagef("input log: %v", err)
	}
	defer f.Close()
	rd := wire.NewReader(f, wire.ReaderOptions{})
	for {
		l, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return cmdutil.Usagef("input log %s: %v", name, err)
		}
		var in struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if l.Kind == wire.Noise || json.Unmarshal(l.Raw, &in) != nil || in.Type != wire.TypeUserInput || in.Text == nil {
			continue
		}
		if strings.HasPrefix(*in.Text, "/") {
			continue
		}
		if len(b.inputs) >= maxTranscript {
			b.omit("input log messages")
			continue
		}
		b.inputs = append(b.inputs, *in.Text)
	}
}
