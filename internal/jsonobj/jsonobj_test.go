package jsonobj

import (
	"encoding/json"
	"testing"
)

func TestConcat(t *testing.T) {
	type a struct {
		Step int     `json:"step"`
		Eps  float64 `json:"epsilon,omitempty"`
	}
	type b struct {
		F int `json:"f,omitempty"`
	}
	for _, c := range []struct {
		parts []any
		want  string
	}{
		{[]any{a{Step: 1, Eps: 0.5}, b{F: 3}}, `{"step":1,"epsilon":0.5,"f":3}`},
		{[]any{a{Step: 1}, nil, b{}}, `{"step":1}`},
		{[]any{b{}, a{Step: 2}, b{F: 1}}, `{"step":2,"f":1}`},
		{nil, `{}`},
	} {
		got, err := Concat(c.parts...)
		if err != nil || string(got) != c.want {
			t.Errorf("Concat(%v) = %s, %v; want %s", c.parts, got, err, c.want)
		}
		if !json.Valid(got) {
			t.Errorf("%s is not valid JSON", got)
		}
	}
	for _, bad := range []any{3, "x", []int{1}, json.RawMessage(`null`)} {
		if _, err := Concat(a{}, bad); err == nil {
			t.Errorf("part %v accepted", bad)
		}
	}
}
