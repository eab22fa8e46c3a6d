// Package jsonobj joins JSON objects: a record made of parts that different
// packages define (the trainer's fields, an aggregation rule's diagnostics)
// is written as one flat object with the parts' fields in order.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Concat marshals each non-nil part, each of which must marshal to a JSON
// object, and returns one object holding all their members in order. It
// does not check for duplicate keys across parts.
func Concat(parts ...any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	n := 0
	for i, p := range parts {
		if p == nil {
			continue
		}
		b, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("jsonobj: part %d: %w", i, err)
		}
		if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
			return nil, fmt.Errorf("jsonobj: part %d (%T) is not a JSON object: %s", i, p, b)
		}
		body := b[1 : len(b)-1]
		if len(body) == 0 {
			continue
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		buf.Write(body)
		n++
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
