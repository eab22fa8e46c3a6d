package datasets

import (
	"bufio"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// A minimal, strict reader of MATLAB v5 (and v7, i.e. v5 with compressed
// elements) MAT-files holding real numeric matrices: enough for the SVHN
// cropped-digits files. Reference: MathWorks, "MAT-File Format" (matfile_format.pdf).

// MAT v5 data types (miXXX) and array classes (mxXXX_CLASS).
const (
	miINT8       = 1
	miUINT8      = 2
	miINT16      = 3
	miUINT16     = 4
	miINT32      = 5
	miUINT32     = 6
	miSINGLE     = 7
	miDOUBLE     = 9
	miINT64      = 12
	miUINT64     = 13
	miMATRIX     = 14
	miCOMPRESSED = 15

	mxDOUBLE = 6 // the first numeric class
	mxUINT8  = 9
	mxUINT64 = 15 // the last numeric class

	matHeaderLen = 128
	matMaxName   = 256     // bytes of a variable name
	matMaxDims   = 8       // dimensions of an array
	matMaxElems  = 1 << 40 // elements of an array
)

// matClassNames names the array classes for error messages.
var matClassNames = [...]string{1: "cell", 2: "struct", 3: "object", 4: "char", 5: "sparse", 6: "double",
	7: "single", 8: "int8", 9: "uint8", 10: "int16", 11: "uint16", 12: "int32", 13: "uint32", 14: "int64",
	15: "uint64", 16: "function handle", 17: "opaque"}

func matClassName(c uint8) string {
	if int(c) < len(matClassNames) && matClassNames[c] != "" {
		return matClassNames[c]
	}
	return fmt.Sprintf("class %d", c)
}

// matVar is one variable of a MAT-file, handed to the caller of readMAT
// with its real part unread: the caller reads exactly size bytes of
// dataType values (in order) from data.
type matVar struct {
	name     string
	class    uint8 // mxXXX_CLASS
	dims     []int // MATLAB order: rows, columns, …
	dataType uint32
	size     int64 // bytes of data
	data     io.Reader
	order    binary.ByteOrder
}

// count returns the number of elements, the product of dims.
func (v *matVar) count() int64 {
	n := int64(1)
	for _, d := range v.dims {
		n *= int64(d) // dims are capped, so this cannot overflow
	}
	return n
}

// matElemSize returns the size in bytes of one value of a numeric data type
// (0 for a non-numeric type).
func matElemSize(t uint32) int {
	switch t {
	case miINT8, miUINT8:
		return 1
	case miINT16, miUINT16:
		return 2
	case miINT32, miUINT32, miSINGLE:
		return 4
	case miDOUBLE, miINT64, miUINT64:
		return 8
	}
	return 0
}

// float64s reads the real part as float64 values. MATLAB stores a double
// array in the smallest integer type that holds its values, so every
// numeric data type is accepted; count must be at most maxCount.
func (v *matVar) float64s(maxCount int) ([]float64, error) {
	es := matElemSize(v.dataType)
	n := v.count()
	if es == 0 {
		return nil, fmt.Errorf("variable %s: data type %d is not numeric", v.name, v.dataType)
	}
	if n > int64(maxCount) {
		return nil, fmt.Errorf("variable %s has %d elements, more than %d", v.name, n, maxCount)
	}
	if v.size != n*int64(es) {
		return nil, fmt.Errorf("variable %s: %d bytes of data for %d elements of %d bytes", v.name, v.size, n, es)
	}
	buf := make([]byte, v.size)
	if err := readFullCtx(v.data, buf, "variable "+v.name); err != nil {
		return nil, err
	}
	out := make([]float64, n)
	o := v.order
	for i := range out {
		b := buf[i*es:]
		switch v.dataType {
		case miINT8:
			out[i] = float64(int8(b[0]))
		case miUINT8:
			out[i] = float64(b[0])
		case miINT16:
			out[i] = float64(int16(o.Uint16(b)))
		case miUINT16:
			out[i] = float64(o.Uint16(b))
		case miINT32:
			out[i] = float64(int32(o.Uint32(b)))
		case miUINT32:
			out[i] = float64(o.Uint32(b))
		case miSINGLE:
			out[i] = float64(math.Float32frombits(o.Uint32(b)))
		case miDOUBLE:
			out[i] = math.Float64frombits(o.Uint64(b))
		case miINT64:
			out[i] = float64(int64(o.Uint64(b)))
		case miUINT64:
			out[i] = float64(o.Uint64(b))
		}
	}
	return out, nil
}

// readMAT reads a MAT v5 file from r and calls visit for each variable, in
// file order. visit must read exactly v.size bytes from v.data or return an
// error. Only real, non-sparse numeric matrices are accepted, stored as
// miMATRIX elements or miCOMPRESSED (zlib) elements holding one each; the
// file must end after the last element.
func readMAT(r io.Reader, visit func(v *matVar) error) error {
	order, err := readMATHeader(r)
	if err != nil {
		return err
	}
	for k := 0; ; k++ {
		typ, size, small, err := readMATTag(r, order, true)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("element %d: %w", k, err)
		}
		switch {
		case small:
			return fmt.Errorf("element %d: top-level element of type %d in the small format (want a matrix)", k, typ)
		case typ == miMATRIX:
			lr := &io.LimitedReader{R: r, N: int64(size)}
			if err := readMATMatrix(lr, order, visit); err != nil {
				return fmt.Errorf("element %d: %w", k, err)
			}
		case typ == miCOMPRESSED:
			if err := readMATCompressed(r, int64(size), order, visit); err != nil {
				return fmt.Errorf("element %d (compressed): %w", k, err)
			}
		default:
			return fmt.Errorf("element %d has data type %d (want miMATRIX 14 or miCOMPRESSED 15)", k, typ)
		}
	}
}

// readMATHeader reads the 128-byte header and returns the file's byte order.
func readMATHeader(r io.Reader) (binary.ByteOrder, error) {
	var h [matHeaderLen]byte
	if err := readFullCtx(r, h[:], "MAT-file header"); err != nil {
		return nil, err
	}
	text := string(h[:116])
	switch {
	case strings.HasPrefix(text, "MATLAB 7.3 MAT-file"):
		return nil, errors.New("MAT-file version 7.3 (HDF5) is not supported (want a version 5 MAT-file)")
	case !strings.HasPrefix(text, "MATLAB 5.0 MAT-file"):
		return nil, fmt.Errorf("not a MATLAB 5.0 MAT-file (header starts %q)", strings.TrimRight(text[:24], "\x00"))
	}
	var order binary.ByteOrder
	switch string(h[126:128]) {
	case "IM":
		order = binary.LittleEndian
	case "MI":
		order = binary.BigEndian
	default:
		return nil, fmt.Errorf("MAT-file endian indicator %q (want \"IM\" or \"MI\")", h[126:128])
	}
	if v := order.Uint16(h[124:126]); v != 0x0100 {
		return nil, fmt.Errorf("MAT-file version 0x%04x (want 0x0100)", v)
	}
	return order, nil
}

// readMATTag reads a data-element tag: 8 bytes, or 4 for an element in the
// small format (small is true), whose ≤ 4 bytes of data are then the next 4
// bytes of r. At a clean end of stream (no byte read) it returns io.EOF if
// allowEOF.
func readMATTag(r io.Reader, order binary.ByteOrder, allowEOF bool) (typ, size uint32, small bool, err error) {
	var t [4]byte
	n, err := io.ReadFull(r, t[:])
	if n == 0 && err == io.EOF && allowEOF {
		return 0, 0, false, io.EOF
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, 0, false, fmt.Errorf("reading element tag: %w", err)
	}
	w := order.Uint32(t[:])
	if hi := w >> 16; hi != 0 {
		// Small data element: 2 bytes of size, 2 of type, then ≤ 4 bytes of
		// data in the second half of the tag.
		if hi > 4 {
			return 0, 0, false, fmt.Errorf("small data element of %d bytes (at most 4)", hi)
		}
		return w & 0xffff, hi, true, nil
	}
	if err := readFullCtx(r, t[:], "element tag"); err != nil {
		return 0, 0, false, err
	}
	return w, order.Uint32(t[:]), false, nil
}

// readMATSub reads a whole sub-element of a matrix (at most maxLen bytes of
// data), checking its data type and skipping its padding.
func readMATSub(r io.Reader, order binary.ByteOrder, what string, maxLen int, want uint32) ([]byte, error) {
	typ, size, small, err := readMATTag(r, order, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if typ != want {
		return nil, fmt.Errorf("%s has data type %d (want %d)", what, typ, want)
	}
	if int64(size) > int64(maxLen) {
		return nil, fmt.Errorf("%s is %d bytes (at most %d)", what, size, maxLen)
	}
	if small {
		var b [4]byte
		if err := readFullCtx(r, b[:], what); err != nil {
			return nil, err
		}
		return b[:size], nil
	}
	b := make([]byte, size)
	if err := readFullCtx(r, b, what); err != nil {
		return nil, err
	}
	return b, skipMATPadding(r, int64(size), what)
}

// skipMATPadding skips the padding of an element of size bytes to a
// multiple of 8.
func skipMATPadding(r io.Reader, size int64, what string) error {
	var pad [8]byte
	return readFullCtx(r, pad[:(8-size%8)%8], what+" padding")
}

// readMATMatrix reads the content of an miMATRIX element from lr (limited
// to the element's size): array flags, dimensions, name and real part.
func readMATMatrix(lr *io.LimitedReader, order binary.ByteOrder, visit func(v *matVar) error) error {
	flags, err := readMATSub(lr, order, "array flags", 8, miUINT32)
	if err != nil {
		return err
	}
	if len(flags) != 8 {
		return fmt.Errorf("array flags are %d bytes (want 8)", len(flags))
	}
	fw := order.Uint32(flags)
	class := uint8(fw & 0xff)
	switch {
	case fw&0x0800 != 0:
		return fmt.Errorf("complex %s array is not supported", matClassName(class))
	case fw&0x0200 != 0:
		return errors.New("logical array is not supported")
	case class < mxDOUBLE || class > mxUINT64:
		return fmt.Errorf("%s array is not supported (want a numeric matrix)", matClassName(class))
	}
	db, err := readMATSub(lr, order, "dimensions", 4*matMaxDims, miINT32)
	if err != nil {
		return err
	}
	if len(db) < 8 || len(db)%4 != 0 {
		return fmt.Errorf("dimensions sub-element of %d bytes (want 2 to %d int32 values)", len(db), matMaxDims)
	}
	dims := make([]int, len(db)/4)
	total := int64(1)
	for i := range dims {
		d := int32(order.Uint32(db[4*i:]))
		if d < 0 {
			return fmt.Errorf("negative dimension %d", d)
		}
		dims[i] = int(d)
		if d > 0 && total > matMaxElems/int64(d) {
			return fmt.Errorf("array of dimensions %v is too large", dims[:i+1])
		}
		total *= int64(d)
	}
	nb, err := readMATSub(lr, order, "array name", matMaxName, miINT8)
	if err != nil {
		return err
	}
	v := &matVar{name: string(nb), class: class, dims: dims, order: order}
	typ, size, small, err := readMATTag(lr, order, false)
	if err != nil {
		return fmt.Errorf("variable %s real part: %w", v.name, err)
	}
	if matElemSize(typ) == 0 {
		return fmt.Errorf("variable %s real part has data type %d (want a numeric type)", v.name, typ)
	}
	v.dataType, v.size = typ, int64(size)
	data := &io.LimitedReader{R: lr, N: int64(size)}
	if small {
		data.N = 4
	} else if int64(size) > lr.N {
		return fmt.Errorf("variable %s real part of %d bytes overruns its matrix (%d bytes left)", v.name, size, lr.N)
	}
	v.data = io.LimitReader(data, int64(size))
	if err := visit(v); err != nil {
		return err
	}
	if small {
		// Skip the unused bytes of the tag's data half.
		if err := readFullCtx(data, make([]byte, data.N), "small real part"); err != nil {
			return err
		}
	} else {
		if data.N != 0 {
			return fmt.Errorf("variable %s: %d bytes of data left unread", v.name, data.N)
		}
		if err := skipMATPadding(lr, int64(size), "variable "+v.name); err != nil {
			return err
		}
	}
	if lr.N != 0 {
		return fmt.Errorf("variable %s: %d unexpected bytes after its real part (imaginary part or extra sub-elements are not supported)", v.name, lr.N)
	}
	return nil
}

// readMATCompressed reads an miCOMPRESSED element of size bytes: a zlib
// stream holding exactly one miMATRIX element.
func readMATCompressed(r io.Reader, size int64, order binary.ByteOrder, visit func(v *matVar) error) error {
	lim := &io.LimitedReader{R: r, N: size}
	// A ByteReader keeps the decompressor from reading past its stream.
	br := bufio.NewReaderSize(lim, 1<<16)
	zr, err := zlib.NewReader(br)
	if err != nil {
		return err // "zlib: invalid header"
	}
	typ, msize, small, err := readMATTag(zr, order, false)
	if err != nil {
		return err
	}
	if small || typ != miMATRIX {
		return fmt.Errorf("holds data type %d (want miMATRIX 14)", typ)
	}
	if err := readMATMatrix(&io.LimitedReader{R: zr, N: int64(msize)}, order, visit); err != nil {
		return err
	}
	// The matrix must end the stream; reading to EOF checks the Adler-32.
	if err := expectEOF(zr); err != nil {
		return fmt.Errorf("after its matrix: %w", err)
	}
	if left := int64(br.Buffered()) + lim.N; left != 0 {
		return fmt.Errorf("%d bytes after the end of the zlib stream", left)
	}
	return nil
}
