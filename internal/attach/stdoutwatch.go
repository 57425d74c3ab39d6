package attach

import "github.com/fuseraft/fr/internal/liveio"

// watchStdout tells fr-attach when stdout's reader has gone away (liveio.WatchStdout).
var watchStdout = liveio.WatchStdout
