// Package randstream is privtrain's source of keyed random streams: a Key
// (secret, NewSecret, or from a public seed, FromSeed) and Stream(purpose,
// index), an independent ChaCha8 generator per purpose and step, so a resumed
// run redraws exactly the randomness of an uninterrupted one.
package randstream

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
)

// Key keys a family of random streams.
//
// Streams are ChaCha8 generators (math/rand/v2, a cryptographically secure
// PRNG) seeded with HMAC-SHA256(key, purpose ‖ index), a pseudo-random
// function of the key: without the key, the streams of a run are
// computationally indistinguishable from independent uniform bits.
//
// There are two kinds of key, and the difference is a privacy matter:
// NewSecret draws a key from the operating system (crypto/rand), which
// privacy randomness (DP noise, Poisson sampling, the PTR test) must use,
// since the guarantee holds only if the adversary cannot predict the noise;
// the key must stay secret. FromSeed expands a uint64 seed into a key that
// anyone knowing the seed can regenerate: for reproducible research runs,
// tests and randomness that is public anyway (model initialization, the
// attacker's corruption plan).
type Key [32]byte

// NewSecret returns a key drawn from the operating system's CSPRNG.
func NewSecret() (Key, error) {
	var k Key
	if _, err := rand.Read(k[:]); err != nil {
		return Key{}, fmt.Errorf("randstream: secret key from the OS: %w", err)
	}
	return k, nil
}

// FromSeed expands a public seed into a key (SHA-256 of a domain tag and
// the seed). The streams of such a key are a public function of the seed.
func FromSeed(seed uint64) Key {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h := sha256.New()
	h.Write([]byte("privtrain/randstream/seed/v1\x00"))
	h.Write(b[:])
	var k Key
	copy(k[:], h.Sum(nil))
	return k
}

// IsZero reports whether k is the zero key (never a valid key: NewSecret
// returns a zero key with probability 2⁻²⁵⁶ and FromSeed never does).
func (k Key) IsZero() bool { return k == Key{} }

// prf returns HMAC-SHA256(k, tag ‖ 0 ‖ purpose ‖ 0 ‖ index).
func (k Key) prf(tag, purpose string, index uint64) [32]byte {
	m := hmac.New(sha256.New, k[:])
	m.Write([]byte(tag))
	m.Write([]byte{0})
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], index)
	m.Write(b[:])
	var out [32]byte
	copy(out[:], m.Sum(nil))
	return out
}

// Derive returns the key of a sub-component (e.g. "sampler"): independent
// of k's other derived keys and streams, and as secret as k.
func (k Key) Derive(purpose string) Key { return Key(k.prf("derive", purpose, 0)) }

// Stream returns the ChaCha8 stream of (purpose, index). Equal arguments
// give identical streams; distinct ones independent streams.
func (k Key) Stream(purpose string, index uint64) *mrand.Rand {
	return mrand.New(mrand.NewChaCha8(k.prf("stream", purpose, index)))
}

// Uint64 returns a 64-bit value derived from (k, purpose), for APIs that
// take a uint64 seed of public randomness.
func (k Key) Uint64(purpose string) uint64 {
	s := k.prf("uint64", purpose, 0)
	return binary.LittleEndian.Uint64(s[:8])
}

// MarshalText encodes the key as 64 lowercase hex digits.
func (k Key) MarshalText() ([]byte, error) {
	return []byte(hex.EncodeToString(k[:])), nil
}

// UnmarshalText decodes 64 hex digits.
func (k *Key) UnmarshalText(b []byte) error {
	if len(b) != 2*len(k) {
		return fmt.Errorf("randstream: key must be %d hex digits, got %d characters", 2*len(k), len(b))
	}
	var tmp Key
	if _, err := hex.Decode(tmp[:], b); err != nil {
		return fmt.Errorf("randstream: key: %w", err)
	}
	if tmp.IsZero() {
		return fmt.Errorf("randstream: the zero key is not a valid key")
	}
	*k = tmp
	return nil
}

// String never prints the key material (so a key cannot leak through a log
// line or an error message); it prints a short fingerprint instead.
func (k Key) String() string {
	h := sha256.Sum256(k[:])
	return "randstream.Key(" + hex.EncodeToString(h[:4]) + "…)"
}

// GoString is String, for %#v.
func (k Key) GoString() string { return k.String() }
