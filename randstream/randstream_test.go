package randstream

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestStreamsAreDeterministicAndDistinct(t *testing.T) {
	k := FromSeed(7)
	if k != FromSeed(7) || k == FromSeed(8) || k.IsZero() {
		t.Fatal("FromSeed must be a deterministic, injective-looking, non-zero map")
	}
	first := func(s string, i uint64) uint64 { return k.Stream(s, i).Uint64() }
	if first("noise", 3) != first("noise", 3) {
		t.Fatal("Stream is not deterministic")
	}
	seen := map[uint64]string{}
	for _, p := range []string{"noise", "sampler", "noisf", ""} {
		for i := uint64(0); i < 50; i++ {
			v := first(p, i)
			if prev, dup := seen[v]; dup {
				t.Fatalf("streams %q/%d and %s start with the same word", p, i, prev)
			}
			seen[v] = fmt.Sprint(p, "/", i)
		}
	}
	if k.Derive("a") == k.Derive("b") || k.Derive("a") == k || k.Derive("a") != k.Derive("a") {
		t.Fatal("Derive must be deterministic and separate purposes")
	}
	// Purpose and index are framed: ("a", 1) and ("a\x00…", …) cannot collide
	// by concatenation.
	if k.prf("stream", "ab", 0) == k.prf("stream", "a", 0) {
		t.Fatal("prf framing collides")
	}
}

func TestSecretKeysDiffer(t *testing.T) {
	a, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a.IsZero() {
		t.Fatal("two OS keys are equal or zero")
	}
}

// A stream's output is uniform: the mean and variance of 2⁻⁵³-resolution
// floats match U(0,1) (1/2 and 1/12) within 6 standard errors.
func TestStreamUniform(t *testing.T) {
	r := FromSeed(1).Stream("u", 0)
	const n = 200000
	var s, s2 float64
	for i := 0; i < n; i++ {
		u := r.Float64()
		s += u
		s2 += u * u
	}
	mean := s / n
	vr := s2/n - mean*mean
	if math.Abs(mean-0.5) > 6*math.Sqrt(1.0/12/n) || math.Abs(vr-1.0/12) > 6*math.Sqrt(1.0/180/n) {
		t.Fatalf("mean %v variance %v", mean, vr)
	}
}

func TestTextRoundTripAndNoLeak(t *testing.T) {
	k := FromSeed(42)
	txt, err := k.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	var back Key
	if err := back.UnmarshalText(txt); err != nil || back != k {
		t.Fatalf("round trip: %v", err)
	}
	for _, bad := range []string{"", "zz", strings.Repeat("0", 64), strings.Repeat("g", 64)} {
		if err := back.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("UnmarshalText(%q) accepted", bad)
		}
	}
	for _, s := range []string{k.String(), fmt.Sprintf("%v %+v %#v %s", k, k, k, k)} {
		if bytes.Contains([]byte(s), txt[:16]) {
			t.Fatalf("formatting prints key material: %s", s)
		}
	}
}
