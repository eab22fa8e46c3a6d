package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/privtrain/privtrain/randstream"
)

// maxKeyFileSize bounds what ReadNoiseKeyFile reads (a key is 64 hex digits).
const maxKeyFileSize = 4096

// ReadNoiseKeyFile reads the secret key of a run's privacy randomness from
// path (`trainer train --noise-key-file`): 64 hexadecimal digits (32 bytes,
// the format of a run's private/noise.key, so an earlier run's key can be
// reused to repeat it bit for bit), optionally followed by a newline. The
// file must be a regular file readable by its owner only (like an ssh
// key: group or other permission bits are refused), and the key must not
// be visibly non-random (CheckNoiseKey). Generate one with
//
//	(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > FILE)
func ReadNoiseKeyFile(path string) (randstream.Key, error) {
	fail := func(err error) (randstream.Key, error) {
		return randstream.Key{}, fmt.Errorf("noise key file %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fail(err)
	}
	if !fi.Mode().IsRegular() {
		return fail(errors.New("not a regular file"))
	}
	if fi.Size() > maxKeyFileSize {
		return fail(fmt.Errorf("%d bytes; a key is 64 hexadecimal digits", fi.Size()))
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fail(fmt.Errorf("mode %04o lets others read the secret key: chmod 600 it", fi.Mode().Perm()))
	}
	f, err := os.Open(path)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	data := make([]byte, maxKeyFileSize+1)
	n, err := f.Read(data)
	if err != nil {
		return fail(err)
	}
	var k randstream.Key
	if err := k.UnmarshalText(bytes.TrimRight(data[:n], "\r\n")); err != nil {
		return fail(fmt.Errorf("want 64 hexadecimal digits: %w", err))
	}
	if err := CheckNoiseKey(k); err != nil {
		return fail(err)
	}
	return k, nil
}

// CheckNoiseKey refuses keys that are visibly not random: the zero key,
// keys repeating a pattern of at most 8 bytes, and keys with fewer than 12
// distinct byte values (32 uniform bytes have fewer with probability
// 6.4·10⁻²⁶, the Stirling-number sum Σ_{k≤11} S(32,k)·256!/(256−k)!/256³²). It catches hand-typed keys; it cannot tell a key derived from a
// guessable seed, which is why keys come from the OS or a key file.
func CheckNoiseKey(k randstream.Key) error {
	for p := 1; p <= 8; p++ {
		if bytes.Equal(k[p:], k[:len(k)-p]) {
			return fmt.Errorf("the key repeats a %d-byte pattern: use 32 random bytes", p)
		}
	}
	var seen [256]bool
	distinct := 0
	for _, b := range k {
		if !seen[b] {
			seen[b], distinct = true, distinct+1
		}
	}
	if distinct < 12 {
		return fmt.Errorf("the key has only %d distinct byte values: use 32 random bytes", distinct)
	}
	return nil
}
