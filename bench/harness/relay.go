package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/fuseraft/fr/internal/passthrough"
	"github.com/fuseraft/fr/internal/sessioninput"
)

// cmdRelay is the floor of a command between a child and its reader: it starts the child
// (the arguments after the flags) and copies the child's stdout to its own. With -valid it
// reads line by line and passes on only the lines encoding/json.Valid accepts (what fr-stream
// must at least do: lines that are not JSON never reach stdout), writing 64 KiB at a time and
// whenever the child has nothing more ready. With -peek it passes every line as fr-stream
// passes events on Linux (internal/passthrough: each line looked at through tee, moved out with
// splice): the floor of a relay that looks at every line before it goes out.
func cmdRelay(args []string) error {
	fs := flag.NewFlagSet("relay", flag.ExitOnError)
	valid := fs.Bool("valid", false, "pass on only lines that are valid JSON (encoding/json.Valid)")
	peek := fs.Bool("peek", false, "look at every line through tee and move it out with splice, as fr-stream does (Linux)")
	fs.Parse(args)
	if fs.NArg() == 0 {
		return errors.New("usage: harness relay [-valid] COMMAND [ARG...]")
	}
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	switch {
	case *peek:
		err = peekLines(out)
	case !*valid:
		_, err = io.Copy(os.Stdout, out)
	default:
		err = passLines(bufio.NewReaderSize(out, 1<<16), true, func(line []byte) bool { return json.Valid(line) })
	}
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("child: %v", werr)
	}
	return err
}

// peekLines passes every line of the pipe out to stdout through a passthrough.Lines.
func peekLines(out io.Reader) error {
	f, _ := out.(*os.File)
	if f == nil {
		return errors.New("relay -peek: the child's stdout is not a pipe")
	}
	sessioninput.GrowPipe(f) // as fr-stream does
	sessioninput.GrowPipe(os.Stdout)
	l := passthrough.New(f, os.Stdout, 1<<30)
	if l == nil {
		return errors.New("relay -peek: this system or this stdout cannot splice (Linux, into a pipe or a file)")
	}
	defer l.Close()
	for {
		if _, err := l.Next(); err != nil {
			if err == io.EOF {
				err = nil
			}
			if err == nil {
				err = l.OutErr()
			}
			return err
		}
		if err := l.Pass(); err != nil {
			return err
		}
	}
}
