package jsonscan

import "testing"

// shortLines are lines as fuseraft and fr-sim write them in a flood: a token event exactly as
// fr-sim serve floods it, then short events of the other kinds a turn is made of.
var shortLines = []struct {
	name string
	line []byte
}{
	{"token", []byte(`{"type":"token","text":"hello "}`)},
	{"token-short", []byte(`{"type":"token","text":" the"}`)},
	{"token-esc", []byte(`{"type":"token","text":"\n\n"}`)},
	{"token-utf8", []byte(`{"type":"token","text":" café"}`)},
	{"thinking", []byte(`{"type":"thinking","text":"a value == naïve parser in age"}`)},
	{"status", []byte(`{"type":"status","model":"sim-large","turn":1,"context":0.728,"level":"ok","modes":[],"input":32139,"output":854,"cached":138176}`)},
	{"tool_call", []byte(`{"type":"tool_call","id":"call_1","name":"write_file","summary":"{ 😀\n\t== tokens config ` + "`raw`" + ` ra","args":{"path":"config/.env"},"agent":null}`)},
	{"file_changed", []byte(`{"type":"file_changed","path":"cmd/tool/main.go","sigil":"-","added":74,"removed":50}`)},
}

// BenchmarkScanShort scans each of shortLines; ns/op is per line.
func BenchmarkScanShort(b *testing.B) {
	for _, sl := range shortLines {
		b.Run(sl.name, func(b *testing.B) {
			b.SetBytes(int64(len(sl.line)))
			for range b.N {
				Scan(sl.line)
			}
		})
	}
}
