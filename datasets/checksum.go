package datasets

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
)

// checksum is an expected digest of a byte stream.
type checksum struct {
	algo string // "md5" or "sha256"
	hex  string // lower-case hex digest
}

func md5sum(h string) checksum    { return checksum{"md5", h} }
func sha256sum(h string) checksum { return checksum{"sha256", h} }

func (c checksum) String() string { return c.algo + " " + c.hex }

// newHash returns a fresh hash for algo.
func newHash(algo string) (hash.Hash, error) {
	switch algo {
	case "md5":
		return md5.New(), nil
	case "sha256":
		return sha256.New(), nil
	}
	return nil, fmt.Errorf("datasets: unknown checksum algorithm %q", algo)
}

// fileSpec describes one official file: its name inside the dataset folder,
// the accepted digests of its bytes (sums) and, optionally, of its
// decompressed content (contentSums), and where to get it.
type fileSpec struct {
	name        string
	sums        []checksum
	contentSums []checksum
	url         string
}

// expected describes the accepted checksums for error messages.
func (s fileSpec) expected() string {
	var parts []string
	for _, c := range s.sums {
		parts = append(parts, c.String())
	}
	for _, c := range s.contentSums {
		parts = append(parts, c.String()+" (decompressed)")
	}
	if len(parts) == 0 {
		return "none recorded"
	}
	return strings.Join(parts, " or ")
}

// multiHasher computes several digests of one stream at once.
type multiHasher struct {
	algos  []string
	hashes []hash.Hash
}

func newMultiHasher(sums []checksum) (*multiHasher, error) {
	m := &multiHasher{}
	for _, c := range sums {
		dup := false
		for _, a := range m.algos {
			dup = dup || a == c.algo
		}
		if dup {
			continue
		}
		h, err := newHash(c.algo)
		if err != nil {
			return nil, err
		}
		m.algos = append(m.algos, c.algo)
		m.hashes = append(m.hashes, h)
	}
	return m, nil
}

func (m *multiHasher) Write(p []byte) (int, error) {
	for _, h := range m.hashes {
		h.Write(p)
	}
	return len(p), nil
}

// matches reports whether any of sums equals the digest computed so far.
func (m *multiHasher) matches(sums []checksum) bool {
	for i, a := range m.algos {
		got := hex.EncodeToString(m.hashes[i].Sum(nil))
		for _, c := range sums {
			if c.algo == a && strings.EqualFold(c.hex, got) {
				return true
			}
		}
	}
	return false
}

// digests returns the computed digests for error messages.
func (m *multiHasher) digests() string {
	var parts []string
	for i, a := range m.algos {
		parts = append(parts, a+" "+hex.EncodeToString(m.hashes[i].Sum(nil)))
	}
	return strings.Join(parts, ", ")
}
