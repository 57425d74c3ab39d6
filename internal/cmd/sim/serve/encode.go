package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// field is one member of an event, kept in declaration order as fuseraft writes them.
type field struct {
	k string
	v any
}

// encodeEvent writes an event object with its fields in order. Nullable values are passed as
// nil and come out as null, never omitted.
func encodeEvent(typ string, fields ...field) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	writeJSON(&b, typ)
	for _, f := range fields {
		b.WriteByte(',')
		writeJSON(&b, f.k)
		b.WriteByte(':')
		if raw, ok := f.v.(json.RawMessage); ok {
			b.Write(raw)
			continue
		}
		writeJSON(&b, f.v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("serve: encoding %T: %v", v, err))
	}
	b.Truncate(b.Len() - 1) // Encode's newline
}
