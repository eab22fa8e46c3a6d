package datasets

import (
	"bufio"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/privtrain/privtrain/internal/fileutil"
)

// FileError reports a problem with one dataset file: it is missing,
// truncated, malformed or fails its checksum. It names the file, the
// checksum the file must have, and where to download it.
type FileError struct {
	Path     string // file path
	Expected string // accepted checksums, e.g. "md5 f68b3c…"
	URL      string // where to get the file
	Err      error  // what went wrong
}

func (e *FileError) Error() string {
	msg := fmt.Sprintf("datasets: %s: %v", e.Path, e.Err)
	if e.Expected != "" {
		msg += "; expected checksum " + e.Expected
	}
	if e.URL != "" {
		msg += "; download from " + e.URL
	}
	return msg
}

func (e *FileError) Unwrap() error { return e.Err }

// errChecksum is wrapped by a FileError whose file has the wrong checksum.
var errChecksum = errors.New("checksum mismatch")

// compression names the container format detected from a stream's first bytes.
func compression(br *bufio.Reader) string {
	b, _ := br.Peek(3)
	switch {
	case len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b:
		return "gzip"
	case len(b) >= 3 && string(b) == "BZh":
		return "bzip2"
	}
	return "none"
}

// decompress returns a reader of the content of br, which may be gzip,
// bzip2 or uncompressed (detected from its magic bytes).
func decompress(br *bufio.Reader) (io.Reader, error) {
	switch compression(br) {
	case "gzip":
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, nil
	case "bzip2":
		return bzip2.NewReader(br), nil
	}
	return br, nil
}

// readVerified opens path, decompresses it transparently, and hands the
// content to parse. Checksums of the file bytes (and, if spec has
// contentSums, of the decompressed content) are computed while reading, so
// the file is read once. The file must match one of spec's checksums; a
// spec with no checksums at all is refused. Every failure is a *FileError.
func readVerified(path string, spec fileSpec, parse func(r io.Reader) error) error {
	fail := func(err error) error {
		return &FileError{Path: path, Expected: spec.expected(), URL: spec.url, Err: err}
	}
	if len(spec.sums)+len(spec.contentSums) == 0 {
		return fail(errors.New("no checksum to verify against"))
	}
	// A FIFO or device at a data path would block or never end: only
	// regular files are read.
	f, err := fileutil.OpenRegular(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fail(errors.New("file not found"))
		}
		return fail(err)
	}
	defer f.Close()
	return verifyStream(f, spec, parse, fail)
}

// verifyStream is readVerified on an open stream.
func verifyStream(raw io.Reader, spec fileSpec, parse func(r io.Reader) error, fail func(error) error) error {
	rawHash, err := newMultiHasher(spec.sums)
	if err != nil {
		return fail(err)
	}
	contentHash, err := newMultiHasher(spec.contentSums)
	if err != nil {
		return fail(err)
	}
	tee := io.TeeReader(raw, rawHash)
	br := bufio.NewReaderSize(tee, 1<<20)
	content, err := decompress(br)
	var perr error
	if err != nil {
		perr = err
	} else {
		if len(spec.contentSums) > 0 {
			content = io.TeeReader(content, contentHash)
		}
		perr = parse(content)
		if perr == nil && len(spec.contentSums) > 0 {
			// Hash any content the parser did not need (it is then rejected below
			// only if parse rejected it).
			if _, err := io.Copy(io.Discard, content); err != nil {
				perr = err
			}
		}
	}
	// Finish hashing the raw bytes.
	if _, err := io.Copy(io.Discard, br); err != nil && perr == nil {
		perr = err
	}
	ok := (len(spec.sums) > 0 && rawHash.matches(spec.sums)) ||
		(len(spec.contentSums) > 0 && perr == nil && contentHash.matches(spec.contentSums))
	switch {
	case perr != nil && !ok:
		if errors.Is(perr, io.ErrUnexpectedEOF) || errors.Is(perr, io.EOF) {
			perr = fmt.Errorf("file is truncated (%w)", perr)
		}
		return fail(fmt.Errorf("%w (got %s): %w", errChecksum, rawHash.digests(), perr))
	case perr != nil:
		return fail(perr)
	case !ok:
		got := rawHash.digests()
		if len(spec.contentSums) > 0 {
			got += "; decompressed " + contentHash.digests()
		}
		return fail(fmt.Errorf("%w (got %s)", errChecksum, got))
	}
	return nil
}

// readFullCtx reads len(p) bytes, naming what was being read on failure.
func readFullCtx(r io.Reader, p []byte, what string) error {
	if _, err := io.ReadFull(r, p); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("reading %s: %w", what, err)
	}
	return nil
}

// expectEOF reports an error if r has more data.
func expectEOF(r io.Reader) error {
	var b [1]byte
	n, err := io.ReadFull(r, b[:])
	if n > 0 {
		return errors.New("unexpected trailing data after the last record")
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// locate returns the path of spec's file in dir. When the compressed file
// is absent but an unpacked copy (the name without ".gz"/".bz2") exists and
// spec records checksums of the decompressed content, the copy is used.
func locate(dir string, spec fileSpec) string {
	p := filepath.Join(dir, spec.name)
	if fileExists(p) || len(spec.contentSums) == 0 {
		return p
	}
	for _, ext := range []string{".gz", ".bz2"} {
		if u := strings.TrimSuffix(p, ext); u != p && fileExists(u) {
			return u
		}
	}
	return p
}
