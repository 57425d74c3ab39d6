package jsonscan

import "unicode/utf8"

// Fields calls fn with each member of the JSON object obj, in order: its key, unescaped (as
// encoding/json decodes it: invalid UTF-8 and lone surrogates become U+FFFD), and the raw
// bytes of its value. A repeated key is passed each time. fn returns false to stop early.
// Fields validates as it goes, exactly as encoding/json.Valid does (nesting limit included),
// and reports whether obj is one valid JSON object (surrounding space allowed) as far as it
// read it: when fn stops early, the rest of obj is not looked at. The key's slice may alias
// obj and is only valid during the call.
func Fields(obj []byte, fn func(key, raw []byte) bool) bool {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipWS(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return skipWS(obj, i+1) == len(obj)
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return false
		}
		kStart := i
		end, esc, ok := stringEnd(obj, i+1)
		if !ok {
			return false
		}
		key := obj[kStart+1 : end-1]
		if esc || !(IsASCII(key) || utf8.Valid(key)) {
			s, ok := Unquote(obj[kStart:end])
			if !ok {
				return false
			}
			key = []byte(s)
		}
		i = skipWS(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		vStart := skipWS(obj, i+1)
		if i, ok = valueEnd(obj, vStart, 1); !ok {
			return false
		}
		if !fn(key, obj[vStart:i]) {
			return true
		}
		i = skipWS(obj, i)
		if i >= len(obj) {
			return false
		}
		if obj[i] == '}' {
			return skipWS(obj, i+1) == len(obj)
		}
		if obj[i] != ',' {
			return false
		}
		i = skipWS(obj, i+1)
	}
}

// Members is Fields for an object already known to be valid JSON, on a hot path: it does not
// validate, and passes each key as written (quotes and escapes included) with the raw bytes of
// its value. It returns false when obj is not an object, or when fn returns false.
func Members(obj []byte, fn func(key, raw []byte) bool) bool {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i++
	for {
		i = SkipSpace(obj, i)
		if i >= len(obj) {
			return false
		}
		if obj[i] == '}' {
			return true
		}
		if obj[i] == ',' {
			i = SkipSpace(obj, i+1)
		}
		kEnd := SkipString(obj, i)
		key := obj[i:kEnd]
		i = SkipSpace(obj, kEnd)
		i = SkipSpace(obj, i+1) // ':'
		vEnd := SkipValue(obj, i)
		if vEnd <= i || !fn(key, obj[i:vEnd]) {
			return false
		}
		i = vEnd
	}
}
