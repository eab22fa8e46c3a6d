package datasets

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// matWriter writes MAT v5 files in the layout MATLAB uses: 128-byte header,
// then one miMATRIX element per variable (array flags, dimensions, name,
// real part), each sub-element padded to 8 bytes and 1–4-byte ones in the
// small format; optionally each variable wrapped in an miCOMPRESSED
// (zlib) element, as `save` does by default since MATLAB 7.
type matWriter struct {
	order      binary.AppendByteOrder
	compressed bool
}

func (w matWriter) header() []byte {
	h := []byte("MATLAB 5.0 MAT-file, Platform: GLNXA64, Created on: Mon Dec  5 21:09:26 2011")
	h = append(h, bytes.Repeat([]byte{' '}, 116-len(h))...)
	h = append(h, make([]byte, 8)...) // subsystem data offset
	h = w.order.AppendUint16(h, 0x0100)
	return w.order.AppendUint16(h, 'M'<<8|'I')
}

func (w matWriter) elem(typ uint32, data []byte) []byte {
	var b []byte
	if len(data) <= 4 {
		b = w.order.AppendUint32(b, uint32(len(data))<<16|typ)
		return append(append(b, data...), make([]byte, 4-len(data))...)
	}
	b = w.order.AppendUint32(b, typ)
	b = w.order.AppendUint32(b, uint32(len(data)))
	b = append(b, data...)
	return append(b, make([]byte, (8-len(data)%8)%8)...)
}

// matrix encodes a variable; flags holds the flag bits above the class.
func (w matWriter) matrix(name string, class, flags uint32, dims []int, dataType uint32, data []byte) []byte {
	var fl, dm []byte
	fl = w.order.AppendUint32(fl, flags|class)
	fl = w.order.AppendUint32(fl, 0)
	for _, d := range dims {
		dm = w.order.AppendUint32(dm, uint32(d))
	}
	var body []byte
	body = append(body, w.elem(miUINT32, fl)...)
	body = append(body, w.elem(miINT32, dm)...)
	body = append(body, w.elem(miINT8, []byte(name))...)
	body = append(body, w.elem(dataType, data)...)
	var b []byte
	b = w.order.AppendUint32(b, miMATRIX)
	b = w.order.AppendUint32(b, uint32(len(body)))
	b = append(b, body...)
	if !w.compressed {
		return b
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	var c []byte
	c = w.order.AppendUint32(c, miCOMPRESSED)
	c = w.order.AppendUint32(c, uint32(z.Len()))
	return append(c, z.Bytes()...)
}

func (w matWriter) file(vars ...[]byte) []byte {
	return slices.Concat(append([][]byte{w.header()}, vars...)...)
}

// svhnPixel is the test value of X(r, c, ch, n) (0-based).
func svhnPixel(r, c, ch, n int) byte { return byte(r*7 + c*3 + ch*101 + n*53) }

// svhnX returns X (32×32×3×n, uint8) in MATLAB's column-major order: the
// first index varies fastest.
func svhnX(n int) []byte {
	var x []byte
	for k := 0; k < n; k++ {
		for ch := 0; ch < 3; ch++ {
			for c := 0; c < 32; c++ {
				for r := 0; r < 32; r++ {
					x = append(x, svhnPixel(r, c, ch, k))
				}
			}
		}
	}
	return x
}

func (w matWriter) xVar(n int) []byte {
	return w.matrix("X", mxUINT8, 0, []int{32, 32, 3, n}, miUINT8, svhnX(n))
}

// yVar encodes labels as double N×1, stored as dataType (MATLAB stores
// small integers in a double array as miUINT8).
func (w matWriter) yVar(labels []float64, dataType uint32) []byte {
	var data []byte
	for _, l := range labels {
		switch dataType {
		case miDOUBLE:
			data = w.order.AppendUint64(data, math.Float64bits(l))
		case miUINT8:
			data = append(data, byte(l))
		case miINT16:
			data = w.order.AppendUint16(data, uint16(int16(l)))
		}
	}
	return w.matrix("y", mxDOUBLE, 0, []int{len(labels), 1}, dataType, data)
}

var (
	svhnLE  = matWriter{order: binary.LittleEndian}
	svhnLEZ = matWriter{order: binary.LittleEndian, compressed: true}
	svhnBEZ = matWriter{order: binary.BigEndian, compressed: true}
)

// loadSVHNBytes writes b as <dir>/svhn/test_32x32.mat and loads it with a
// checksum table holding its MD5.
func loadSVHNBytes(t *testing.T, b []byte) (*Dataset, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), svhnDir)
	spec := svhnFiles["test"]
	writeFile(t, filepath.Join(dir, spec.name), b)
	spec.sums = []checksum{md5sum(md5Hex(b))}
	return loadSVHNFrom("test", dir, map[string]fileSpec{"test": spec})
}

func TestSVHNFormat(t *testing.T) {
	stored := []float64{10, 1, 5}
	want := []int{0, 1, 5}
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"uncompressed, y double", svhnLE.file(svhnLE.xVar(3), svhnLE.yVar(stored, miDOUBLE))},
		{"compressed, y stored as uint8", svhnLEZ.file(svhnLEZ.xVar(3), svhnLEZ.yVar(stored, miUINT8))},
		{"big-endian compressed, y first as int16", svhnBEZ.file(svhnBEZ.yVar(stored, miINT16), svhnBEZ.xVar(3))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := loadSVHNBytes(t, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			if d.N != 3 || d.Classes != 10 || !slices.Equal(d.Shape, []int{3, 32, 32}) || d.Name != "svhn/test" || len(d.X) != 3*3072 {
				t.Fatalf("N %d classes %d shape %v name %q len(X) %d", d.N, d.Classes, d.Shape, d.Name, len(d.X))
			}
			if !slices.Equal(d.Labels, want) {
				t.Errorf("labels %v, want %v (10 is the digit 0)", d.Labels, want)
			}
			// Channel-major, row by row: X(r, c, ch, n) lands at
			// n·3072 + ch·1024 + r·32 + c.
			for n := 0; n < 3; n++ {
				for ch := 0; ch < 3; ch++ {
					for r := 0; r < 32; r++ {
						for c := 0; c < 32; c++ {
							got := d.X[n*3072+ch*1024+r*32+c]
							if w := float32(svhnPixel(r, c, ch, n)) / 255; got != w {
								t.Fatalf("example %d channel %d row %d col %d: %v, want %v", n, ch, r, c, got, w)
							}
						}
					}
				}
			}
		})
	}
}

// TestSVHNOrientation places single pixels and checks where they land: the
// first MATLAB index is the image row (top to bottom), the second the
// column.
func TestSVHNOrientation(t *testing.T) {
	x := make([]byte, 2*3072)
	at := func(r, c, ch, n int) int { return r + 32*c + 1024*ch + 3072*n } // column-major
	x[at(0, 5, 1, 1)] = 255                                                // top row, column 5, green, 2nd image
	x[at(3, 0, 2, 0)] = 51                                                 // row 3, left column, blue, 1st image
	w := svhnLE
	b := w.file(w.matrix("X", mxUINT8, 0, []int{32, 32, 3, 2}, miUINT8, x), w.yVar([]float64{1, 2}, miDOUBLE))
	d, err := loadSVHNBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range d.X {
		want := float32(0)
		switch i {
		case 1*3072 + 1*1024 + 0*32 + 5:
			want = 1
		case 0*3072 + 2*1024 + 3*32 + 0:
			want = 0.2
		}
		if v != want {
			t.Errorf("X[%d] = %v, want %v", i, v, want)
		}
	}
}

func TestSVHNErrors(t *testing.T) {
	w, z := svhnLE, svhnLEZ
	x3, y3 := w.xVar(3), w.yVar([]float64{1, 2, 3}, miDOUBLE)
	good := w.file(x3, y3)
	goodZ := z.file(z.xVar(3), z.yVar([]float64{1, 2, 3}, miUINT8))
	hdr := func(f func(h []byte)) []byte {
		b := slices.Clone(good)
		f(b[:128])
		return b
	}
	yBad := func(v float64) []byte { return w.file(x3, w.yVar([]float64{1, v, 3}, miDOUBLE)) }
	// The first compressed element grown by 3 bytes of junk after its stream.
	xz := append(z.xVar(3), 1, 2, 3)
	binary.LittleEndian.PutUint32(xz[4:], binary.LittleEndian.Uint32(xz[4:])+3)
	zTrailing := z.file(xz, z.yVar([]float64{1, 2, 3}, miUINT8))
	zCorrupt := slices.Clone(goodZ)
	zCorrupt[len(zCorrupt)-30] ^= 0xff // inside y's zlib stream
	zAdler := slices.Clone(goodZ)
	zAdler[len(zAdler)-1] ^= 0xff // y's Adler-32
	zHeader := slices.Clone(goodZ)
	zHeader[len(zHeader)-len(z.yVar([]float64{1, 2, 3}, miUINT8))+8] = 0 // y's zlib header

	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "MAT-file header"},
		{"truncated header", good[:100], "unexpected EOF"},
		{"truncated in X", good[:128+200], "unexpected EOF"},
		{"truncated in y", good[:len(good)-5], "unexpected EOF"},
		{"truncated compressed", goodZ[:len(goodZ)-10], "unexpected EOF"},
		{"not a MAT-file", hdr(func(h []byte) { copy(h, "hello") }), "not a MATLAB 5.0 MAT-file"},
		{"v7.3", hdr(func(h []byte) { copy(h, "MATLAB 7.3 MAT-file") }), "7.3 (HDF5)"},
		{"endian", hdr(func(h []byte) { copy(h[126:], "XX") }), "endian indicator"},
		{"version", hdr(func(h []byte) { h[124] = 2 }), "version 0x0102"},
		{"top-level element type", w.file(w.elem(miINT8, []byte("hello world")), x3, y3), "data type 1"},
		{"X wrong class", w.file(w.matrix("X", mxDOUBLE, 0, []int{32, 32, 3, 3}, miUINT8, svhnX(3)), y3), "want uint8"},
		{"X wrong data type", w.file(w.matrix("X", mxUINT8, 0, []int{32, 32, 3, 1}, miINT8, svhnX(1)), w.yVar([]float64{1}, miDOUBLE)), "want uint8"},
		{"y wrong class", w.file(x3, w.matrix("y", mxUINT8, 0, []int{3, 1}, miUINT8, []byte{1, 2, 3})), "want double"},
		{"char class", w.file(w.matrix("X", 4, 0, []int{1, 3}, miUINT16, []byte{65, 0, 66, 0, 67, 0}), y3), "char array is not supported"},
		{"complex", w.file(x3, w.matrix("y", mxDOUBLE, 0x0800, []int{3, 1}, miUINT8, []byte{1, 2, 3})), "complex double"},
		{"X wrong dims", w.file(w.matrix("X", mxUINT8, 0, []int{32, 32, 9}, miUINT8, svhnX(3)), y3), "want 32×32×3×N"},
		{"X transposed dims", w.file(w.matrix("X", mxUINT8, 0, []int{3, 32, 32, 3}, miUINT8, svhnX(3)), y3), "want 32×32×3×N"},
		{"X huge dims", w.file(w.matrix("X", mxUINT8, 0, []int{32, 32, 3, 1 << 25}, miUINT8, svhnX(1)), y3), "want 32×32×3×N"},
		{"too many elements", w.file(w.matrix("X", mxUINT8, 0, []int{1 << 20, 1 << 20, 4}, miUINT8, svhnX(1)), y3), "too large"},
		{"X data size", w.file(w.matrix("X", mxUINT8, 0, []int{32, 32, 3, 3}, miUINT8, svhnX(2)), y3), "bytes of data for 3 images"},
		{"y row vector", w.file(x3, w.matrix("y", mxDOUBLE, 0, []int{1, 3}, miUINT8, []byte{1, 2, 3})), "want N×1"},
		{"y count", w.file(x3, w.yVar([]float64{1, 2}, miDOUBLE)), "2 labels but X has 3 images"},
		{"X count", w.file(w.yVar([]float64{1, 2}, miDOUBLE), x3), "3 images but y has 2 labels"},
		{"y data size", w.file(x3, w.matrix("y", mxDOUBLE, 0, []int{3, 1}, miDOUBLE, make([]byte, 16))), "16 bytes of data for 3 elements"},
		{"no y", w.file(x3), "no variable y"},
		{"no X", w.file(y3), "no variable X"},
		{"extra variable", w.file(x3, y3, w.matrix("z", mxDOUBLE, 0, []int{1, 1}, miUINT8, []byte{1})), `unexpected variable "z"`},
		{"X twice", w.file(x3, y3, x3), "X appears twice"},
		{"label 0", yBad(0), "label 0 of example 1"},
		{"label 11", yBad(11), "label 11 of example 1"},
		{"label 2.5", yBad(2.5), "label 2.5 of example 1"},
		{"label NaN", yBad(math.NaN()), "label NaN of example 1"},
		{"trailing bytes", append(slices.Clone(good), 1, 2, 3), "element tag"},
		{"junk after zlib stream", zTrailing, "3 bytes after the end of the zlib stream"},
		{"corrupt zlib", zCorrupt, "element 1 (compressed): reading element tag: flate: corrupt input"},
		{"zlib checksum", zAdler, "element 1 (compressed): after its matrix: zlib: invalid checksum"},
		{"zlib header", zHeader, "element 1 (compressed): zlib: invalid header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadSVHNBytes(t, tc.file)
			var fe *FileError
			if !errors.As(err, &fe) || !strings.HasSuffix(fe.Path, "test_32x32.mat") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a FileError mentioning %q", err, tc.want)
			}
		})
	}
}

// TestSVHNCorruptNoPanic feeds every truncation and random corruptions of
// small files to the reader: each must fail (or decode) without panicking.
func TestSVHNCorruptNoPanic(t *testing.T) {
	files := [][]byte{
		svhnLE.file(svhnLE.xVar(1), svhnLE.yVar([]float64{7}, miUINT8)),
		svhnBEZ.file(svhnBEZ.yVar([]float64{7}, miDOUBLE), svhnBEZ.xVar(1)),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range files {
		for i := 0; i < len(f); i++ {
			if err := readSVHN(bytes.NewReader(f[:i]), &Dataset{}); err == nil {
				t.Fatalf("truncation to %d of %d bytes accepted", i, len(f))
			}
		}
		for i := 0; i < 2000; i++ {
			b := slices.Clone(f)
			for k := rng.IntN(4); k >= 0; k-- {
				b[128+rng.IntN(len(b)-128)] = byte(rng.Uint32())
			}
			_ = readSVHN(bytes.NewReader(b), &Dataset{})
		}
	}
}

func TestSVHNPublicLoader(t *testing.T) {
	dataDir := t.TempDir()
	// Missing file: the error names the path, the official MD5 and the URL.
	_, err := Load("svhn", "train", dataDir)
	for _, want := range []string{filepath.Join("svhn", "train_32x32.mat"), "file not found",
		"md5 e26dedcc434d2e4c54c9b2d4a06d8373", "http://ufldl.stanford.edu/housenumbers/train_32x32.mat"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing train file: got %v, want mention of %q", err, want)
		}
	}
	// A well-formed file that is not the official one fails the MD5 check.
	w := svhnLEZ
	writeFile(t, filepath.Join(dataDir, "svhn", "test_32x32.mat"), w.file(w.xVar(2), w.yVar([]float64{1, 10}, miUINT8)))
	_, err = Load("svhn", "test", dataDir)
	for _, want := range []string{"checksum mismatch", "md5 eb5a983be6a315427106f1b164d9cef3", "http://ufldl.stanford.edu/housenumbers/test_32x32.mat"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("unofficial test file: got %v, want mention of %q", err, want)
		}
	}
	if _, err := Load("svhn", "extra", dataDir); err == nil || !strings.Contains(err.Error(), `no split "extra"`) {
		t.Errorf("split extra: got %v", err)
	}
	if _, err := Load("svhn", "train", ""); err == nil || !strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("no data dir: got %v", err)
	}
	if !slices.Contains(Names(), "svhn") {
		t.Errorf("Names() = %v lacks svhn", Names())
	}
}
