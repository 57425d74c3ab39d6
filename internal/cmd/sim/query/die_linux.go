package query

import (
	"syscall"
	"unsafe"
)

// setDefaultAction sets sig's disposition to SIG_DFL for the whole process, as the runtime
// does before it re-raises a signal it cannot handle: signal.Reset leaves the runtime's own
// handler in place for SEGV, ABRT and PIPE, which turns a kill into a traceback or nothing.
// A zeroed kernel sigaction is SIG_DFL, no flags and an empty mask on every architecture.
func setDefaultAction(sig syscall.Signal) bool {
	var act [8]uint64
	const sigsetSize = 8 // the kernel's sigset_t: 64 signals
	_, _, errno := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig),
		uintptr(unsafe.Pointer(&act)), 0, sigsetSize, 0, 0)
	return errno == 0
}
