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
)

// cmdRelay is the floor of a command between a child and its reader: it starts the child
// (the arguments after the flags) and copies the child's stdout to its own. With -valid it
// reads line by line and passes on only the lines encoding/json.Valid accepts (what fr-stream
// must at least do: lines that are not JSON never reach stdout), writing 64 KiB at a time and
// whenever the child has nothing more ready.
func cmdRelay(args []string) error {
	fs := flag.NewFlagSet("relay", flag.ExitOnError)
	valid := fs.Bool("valid", false, "pass on only lines that are valid JSON (encoding/json.Valid)")
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
	if !*valid {
		_, err = io.Copy(os.Stdout, out)
	} else {
		err = passLines(bufio.NewReaderSize(out, 1<<16), true, func(line []byte) bool { return json.Valid(line) })
	}
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("child: %v", werr)
	}
	return err
}
