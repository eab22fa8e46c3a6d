package datasets

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// LoadWithChecksums is Load verifying every file against the SHA-256 the
// caller gives (file name → hex digest, as ReadChecksumFile returns) instead
// of the official checksums. The files keep the official names and layout;
// what changes is which bytes are accepted, so a run on re-created or
// subset files (e.g. a smoke test of a cluster set-up before the real
// files arrive) is reproducible and names its data. A file the manifest
// does not list is refused. It supports cifar10 (batch files or the
// tarball) and emnist-letters / emnist-balanced; other datasets return an
// error (use Load).
func LoadWithChecksums(name, split, dataDir string, sha256 map[string]string) (*Dataset, error) {
	for f, h := range sha256 {
		if b, err := hex.DecodeString(h); err != nil || len(b) != 32 {
			return nil, fmt.Errorf("datasets: checksum manifest: %q for %s is not a SHA-256 hex digest", h, f)
		}
	}
	spec := func(name, url string) fileSpec {
		s := fileSpec{name: name, url: url + " (checksum from the run's manifest)"}
		if h, ok := sha256[name]; ok {
			s.sums = []checksum{sha256sum(strings.ToLower(h))}
		}
		return s
	}
	var d *Dataset
	var err error
	switch name {
	case "cifar10":
		if _, err := cifarBatchNames(split); err != nil {
			return nil, err
		}
		if err := requireDataDir(name, dataDir); err != nil {
			return nil, err
		}
		specs := cifarSpecs{batches: map[string]fileSpec{}, tarball: spec(cifarTarball, cifarURL)}
		for n := range cifarFiles.batches {
			specs.batches[n] = spec(n, cifarURL)
		}
		d, err = loadCIFAR10From(split, dataDir, specs)
	case "emnist-letters", "emnist-balanced":
		variant := strings.TrimPrefix(name, "emnist-")
		if split != "train" && split != "test" {
			return nil, splitError(name, split, "train", "test")
		}
		if err := requireDataDir(name, dataDir); err != nil {
			return nil, err
		}
		files := emnistFiles(variant, split)
		for i := range files {
			files[i] = spec(files[i].name, emnistURL)
		}
		d, err = loadEMNISTFiles(variant, split, filepath.Join(dataDir, "emnist"), files)
	default:
		return nil, fmt.Errorf("datasets: checksum manifests are supported for cifar10, emnist-letters and emnist-balanced, not %q", name)
	}
	if err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("datasets: loading %s/%s: %w", name, split, err)
	}
	return d, nil
}

// ReadChecksumFile reads a manifest in the format of sha256sum: one
// "<64 hex digits>  <file name>" per line (a '*' before the name, blank
// lines and # comments allowed). Names are the files' base names.
func ReadChecksumFile(p string) (map[string]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("datasets: checksum manifest: %w", err)
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		h, name, ok := strings.Cut(line, " ")
		name = strings.TrimPrefix(strings.TrimSpace(name), "*")
		if b, err := hex.DecodeString(h); !ok || name == "" || err != nil || len(b) != 32 {
			return nil, fmt.Errorf("datasets: checksum manifest %s line %d: want \"<sha256 hex>  <file>\"", p, n)
		}
		m[path.Base(name)] = strings.ToLower(h)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("datasets: checksum manifest %s: %w", p, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("datasets: checksum manifest %s lists no file", p)
	}
	return m, nil
}
