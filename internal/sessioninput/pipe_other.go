//go:build !linux

package sessioninput

// PipeSize is the capacity GrowPipe asks for where pipes can grow (Linux).
const PipeSize = 1 << 20

// GrowPipe enlarges a pipe's buffer where the system allows it (Linux); here it does nothing.
func GrowPipe(w any) {}
