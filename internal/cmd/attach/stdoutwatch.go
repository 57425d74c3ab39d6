package attach

import "github.com/fuseraft/fr/internal/sessioninput"

// watchStdout tells fr-attach when stdout's reader has gone away (sessioninput.WatchStdout).
var watchStdout = sessioninput.WatchStdout
