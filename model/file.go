package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/privtrain/privtrain/internal/fileutil"
)

// File format (all integers little-endian):
//
//	magic    [8]byte  "PTMODEL\x00"
//	version  uint32   fileVersion
//	specLen  uint32   length of the JSON-encoded Spec
//	spec     [specLen]byte
//	nParams  uint64
//	params   [nParams]float32 (IEEE 754 bits)
//	checksum [32]byte SHA-256 of everything before it
const (
	fileMagic   = "PTMODEL\x00"
	fileVersion = 1
	maxSpecLen  = 1 << 20
)

// Save writes the architecture and parameters of m to path atomically: the
// file is written to a temporary file in the same directory, synced and
// renamed over path, so path holds either the old or the new model.
//
// Save and Load use a versioned binary format: magic, version, the Spec as
// JSON, the float32 parameters and a SHA-256 checksum. Save writes atomically
// (temporary file, fsync, rename).
func Save(path string, m Model) error {
	spec, err := json.Marshal(m.Spec())
	if err != nil {
		return fmt.Errorf("model: save %s: encoding spec: %w", path, err)
	}
	params := m.Params()
	var buf bytes.Buffer
	buf.Grow(len(fileMagic) + 16 + len(spec) + 4*len(params) + sha256.Size)
	buf.WriteString(fileMagic)
	buf.Write(binary.LittleEndian.AppendUint32(nil, fileVersion))
	buf.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(spec))))
	buf.Write(spec)
	buf.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(params))))
	b4 := make([]byte, 4)
	for _, v := range params {
		binary.LittleEndian.PutUint32(b4, math.Float32bits(v))
		buf.Write(b4)
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	if err := fileutil.WriteAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("model: save %s: %w", path, err)
	}
	return nil
}

// Load reads a model written by Save, rebuilding its architecture and
// restoring its parameters. Files that are not model files, are truncated or
// corrupt, or have an unsupported version give an error saying so.
func Load(path string) (Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("model: load: %w", err)
	}
	m, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("model: load %s: %w", path, err)
	}
	return m, nil
}

var errTruncated = errors.New("file is truncated")

func decode(data []byte) (Model, error) {
	if len(data) < len(fileMagic) || string(data[:len(fileMagic)]) != fileMagic {
		return nil, errors.New("not a privtrain model file (bad magic number)")
	}
	r := data[len(fileMagic):]
	if len(r) < 8 {
		return nil, errTruncated
	}
	if v := binary.LittleEndian.Uint32(r); v != fileVersion {
		return nil, fmt.Errorf("unsupported model file version %d (this build reads version %d)", v, fileVersion)
	}
	specLen := binary.LittleEndian.Uint32(r[4:])
	r = r[8:]
	if specLen > maxSpecLen {
		return nil, fmt.Errorf("corrupt header: spec length %d", specLen)
	}
	if uint64(len(r)) < uint64(specLen)+8 {
		return nil, errTruncated
	}
	specJSON := r[:specLen]
	r = r[specLen:]
	n := binary.LittleEndian.Uint64(r)
	r = r[8:]
	if n > uint64(len(r))/4 {
		return nil, errTruncated
	}
	if uint64(len(r)) != 4*n+sha256.Size {
		if uint64(len(r)) < 4*n+sha256.Size {
			return nil, errTruncated
		}
		return nil, fmt.Errorf("%d unexpected trailing bytes", uint64(len(r))-4*n-sha256.Size)
	}
	body := data[:len(data)-sha256.Size]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], data[len(body):]) {
		return nil, errors.New("checksum mismatch: file is corrupt")
	}
	var spec Spec
	if err := json.Unmarshal(specJSON, &spec); err != nil {
		return nil, fmt.Errorf("decoding spec: %w", err)
	}
	m, err := New(spec, 0)
	if err != nil {
		return nil, err
	}
	if uint64(m.NumParams()) != n {
		return nil, fmt.Errorf("file has %d parameters, architecture %s%v needs %d", n, spec.Arch, spec.InputShape, m.NumParams())
	}
	p := make([]float32, n)
	for i := range p {
		p[i] = math.Float32frombits(binary.LittleEndian.Uint32(r[4*i:]))
	}
	if err := m.SetParams(p); err != nil {
		return nil, err
	}
	return m, nil
}
