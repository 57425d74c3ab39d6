package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Object is a JSON object that keeps its keys in the order they were written, so an event
// described in a scenario reaches the client field for field as its author wrote it.
type Object struct {
	keys []string
	vals []json.RawMessage
}

// NewObject returns an object with the given key/value pairs; values are marshalled.
func NewObject(kv ...any) *Object {
	o := &Object{}
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// Keys returns the object's keys in order.
func (o *Object) Keys() []string { return append([]string(nil), o.keys...) }

// Get returns the raw value of key.
func (o *Object) Get(key string) (json.RawMessage, bool) {
	for i, k := range o.keys {
		if k == key {
			return o.vals[i], true
		}
	}
	return nil, false
}

// String returns key's value when it is a JSON string.
func (o *Object) String(key string) (string, bool) {
	raw, ok := o.Get(key)
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// Set replaces key's value in place, or appends key. v is marshalled unless it is a
// json.RawMessage.
func (o *Object) Set(key string, v any) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		raw = Marshal(v)
	}
	for i, k := range o.keys {
		if k == key {
			o.vals[i] = raw
			return
		}
	}
	o.keys = append(o.keys, key)
	o.vals = append(o.vals, raw)
}

// SetFirst sets key and moves it to the front.
func (o *Object) SetFirst(key string, v any) {
	o.Delete(key)
	o.Set(key, v)
	n := len(o.keys) - 1
	o.keys = append([]string{o.keys[n]}, o.keys[:n]...)
	o.vals = append([]json.RawMessage{o.vals[n]}, o.vals[:n]...)
}

// Delete removes key.
func (o *Object) Delete(key string) {
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			o.vals = append(o.vals[:i:i], o.vals[i+1:]...)
			return
		}
	}
}

// Clone returns a copy that can be changed without touching o.
func (o *Object) Clone() *Object {
	return &Object{keys: append([]string(nil), o.keys...), vals: append([]json.RawMessage(nil), o.vals...)}
}

// MarshalJSON writes the object compactly, keys in order.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 2
	for i, k := range o.keys {
		n += len(k) + len(o.vals[i]) + 4
	}
	b.Grow(n)
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(Marshal(k))
		b.WriteByte(':')
		b.Write(o.vals[i])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Bytes is MarshalJSON without the error.
func (o *Object) Bytes() []byte {
	b, _ := o.MarshalJSON()
	return b
}

// Marshal encodes v as compact JSON without HTML escaping (fuseraft's own encoder is applied
// separately, by DotNetJSON, when that fault is on).
func Marshal(v any) []byte {
	if o, ok := v.(*Object); ok {
		return o.Bytes() // already compact JSON: skip the encoder's second pass over it
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("scenario: marshal %T: %v", v, err))
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// nodeJSON converts a YAML (or JSON) node to JSON, keeping mapping order. Scalars keep their
// resolved type: strings stay strings, numbers are written as numbers, null as null.
func nodeJSON(n *yaml.Node) (json.RawMessage, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return json.RawMessage("null"), nil
		}
		return nodeJSON(n.Content[0])
	case yaml.AliasNode:
		return nodeJSON(n.Alias)
	case yaml.MappingNode:
		o, err := nodeObject(n)
		if err != nil {
			return nil, err
		}
		return o.Bytes(), nil
	case yaml.SequenceNode:
		var b bytes.Buffer
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			v, err := nodeJSON(c)
			if err != nil {
				return nil, err
			}
			b.Write(v)
		}
		b.WriteByte(']')
		return b.Bytes(), nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return json.RawMessage("null"), nil
		case "!!bool":
			var v bool
			if err := n.Decode(&v); err != nil {
				return nil, lineErr(n.Line, "%v", err)
			}
			return Marshal(v), nil
		case "!!int", "!!float":
			var v any
			if err := n.Decode(&v); err != nil {
				return nil, lineErr(n.Line, "%v", err)
			}
			if f, ok := v.(float64); ok {
				return json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64)), nil
			}
			return Marshal(v), nil
		}
		return Marshal(n.Value), nil
	}
	return nil, lineErr(n.Line, "unsupported YAML value")
}

func nodeObject(n *yaml.Node) (*Object, error) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil, lineErr(n.Line, "expected a mapping (an object with fields)")
	}
	o := &Object{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		v, err := nodeJSON(n.Content[i+1])
		if err != nil {
			return nil, err
		}
		if _, dup := o.Get(n.Content[i].Value); dup {
			return nil, lineErr(n.Content[i].Line, "field %q given twice", n.Content[i].Value)
		}
		o.Set(n.Content[i].Value, v)
	}
	return o, nil
}

const hexUpper = "0123456789ABCDEF"

// DotNetJSON rewrites compact or indented JSON the way .NET's default encoder
// (System.Text.Json, JavaScriptEncoder.Default) writes it: pure ASCII, with non-ASCII
// characters and < > & ' " + ` (and control characters) inside strings written as \uXXXX
// with UPPERCASE hex; \n \r \t \b \f and \\ keep their short forms, and / is not escaped.
// Characters outside the Basic Multilingual Plane become surrogate pairs, invalid UTF-8
// becomes \uFFFD. Bytes outside strings are copied unchanged. The meaning of valid JSON is
// never changed: decoding the result gives the same value as decoding b.
func DotNetJSON(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/8)
	inStr := false
	for i := 0; i < len(b); {
		c := b[i]
		if !inStr {
			out = append(out, c)
			if c == '"' {
				inStr = true
			}
			i++
			continue
		}
		switch {
		case c == '"':
			out = append(out, c)
			inStr = false
			i++
		case c == '\\':
			if i+1 >= len(b) {
				out = append(out, c)
				i++
				continue
			}
			e := b[i+1]
			switch e {
			case 'u':
				if i+6 <= len(b) {
					if v, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16); err == nil {
						out = dotnetRune(out, rune(v))
						i += 6
						continue
					}
				}
				out = append(out, c, e)
				i += 2
			case '"':
				out = dotnetRune(out, '"')
				i += 2
			case '/':
				out = append(out, '/')
				i += 2
			default: // \\ \n \r \t \b \f stay short
				out = append(out, c, e)
				i += 2
			}
		case c < utf8.RuneSelf:
			out = dotnetRune(out, rune(c))
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			out = dotnetRune(out, r) // RuneError for invalid bytes: \uFFFD
			i += size
		}
	}
	return out
}

// dotnetRune appends r, inside a JSON string, as .NET's default encoder writes it.
func dotnetRune(out []byte, r rune) []byte {
	switch r {
	case '\n':
		return append(out, '\\', 'n')
	case '\r':
		return append(out, '\\', 'r')
	case '\t':
		return append(out, '\\', 't')
	case '\b':
		return append(out, '\\', 'b')
	case '\f':
		return append(out, '\\', 'f')
	case '\\':
		return append(out, '\\', '\\')
	case '<', '>', '&', '\'', '"', '+', '`':
		return appendU(out, r)
	}
	if r >= 0x20 && r < 0x7F {
		return append(out, byte(r))
	}
	if r > 0xFFFF {
		r1, r2 := utf16.EncodeRune(r)
		return appendU(appendU(out, r1), r2)
	}
	return appendU(out, r)
}

func appendU(out []byte, r rune) []byte {
	return append(out, '\\', 'u', hexUpper[r>>12&0xF], hexUpper[r>>8&0xF], hexUpper[r>>4&0xF], hexUpper[r&0xF])
}
