package datasets

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// IDX magic numbers (unsigned bytes; 3 or 1 dimensions).
const (
	idxImagesMagic = 0x00000803
	idxLabelsMagic = 0x00000801
)

// maxIDXBytes bounds the payload an IDX header may announce, so a corrupt
// header cannot trigger a huge allocation.
const maxIDXBytes = 1 << 31

// readIDXHeader reads the magic number and dimensions of an IDX stream.
func readIDXHeader(r io.Reader, wantMagic uint32) ([]int, error) {
	var hdr [4]byte
	if err := readFullCtx(r, hdr[:], "IDX magic number"); err != nil {
		return nil, err
	}
	magic := binary.BigEndian.Uint32(hdr[:])
	if magic != wantMagic {
		return nil, fmt.Errorf("IDX magic number %#08x, want %#08x", magic, wantMagic)
	}
	ndim := int(hdr[3])
	dims := make([]int, ndim)
	total := uint64(1)
	for i := range dims {
		if err := readFullCtx(r, hdr[:], "IDX dimensions"); err != nil {
			return nil, err
		}
		d := binary.BigEndian.Uint32(hdr[:])
		dims[i] = int(d)
		total *= uint64(d)
		if total > maxIDXBytes {
			return nil, fmt.Errorf("IDX dimensions %v too large", dims[:i+1])
		}
	}
	return dims, nil
}

// readIDXImages reads an IDX unsigned-byte image file (magic 0x803):
// count, rows, cols and the row-major pixels.
func readIDXImages(r io.Reader) (pix []byte, count, rows, cols int, err error) {
	dims, err := readIDXHeader(r, idxImagesMagic)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	count, rows, cols = dims[0], dims[1], dims[2]
	if rows == 0 || cols == 0 {
		return nil, 0, 0, 0, fmt.Errorf("IDX images have empty size %d×%d", rows, cols)
	}
	pix = make([]byte, count*rows*cols)
	if err := readFullCtx(r, pix, fmt.Sprintf("%d images of %d×%d pixels", count, rows, cols)); err != nil {
		return nil, 0, 0, 0, err
	}
	if err := expectEOF(r); err != nil {
		return nil, 0, 0, 0, err
	}
	return pix, count, rows, cols, nil
}

// readIDXLabels reads an IDX unsigned-byte label file (magic 0x801).
func readIDXLabels(r io.Reader) ([]byte, error) {
	dims, err := readIDXHeader(r, idxLabelsMagic)
	if err != nil {
		return nil, err
	}
	lab := make([]byte, dims[0])
	if err := readFullCtx(r, lab, fmt.Sprintf("%d labels", dims[0])); err != nil {
		return nil, err
	}
	if err := expectEOF(r); err != nil {
		return nil, err
	}
	return lab, nil
}

// idxOptions says how to turn an IDX image/label pair into a Dataset.
type idxOptions struct {
	name       string // dataset name, e.g. "mnist/train"
	classes    int    // number of classes
	labelShift int    // subtracted from every stored label (EMNIST letters: 1)
	transpose  bool   // images are stored column-major (EMNIST)
	rows, cols int    // required image size
}

// loadIDXPair reads and verifies an IDX image file and label file and
// returns them as a Dataset with pixels scaled to [0, 1].
func loadIDXPair(imgPath string, imgSpec fileSpec, lblPath string, lblSpec fileSpec, opt idxOptions) (*Dataset, error) {
	var (
		pix               []byte
		count, rows, cols int
		lab               []byte
	)
	err := readVerified(imgPath, imgSpec, func(r io.Reader) error {
		var err error
		pix, count, rows, cols, err = readIDXImages(r)
		if err == nil && (rows != opt.rows || cols != opt.cols) {
			err = fmt.Errorf("images are %d×%d, want %d×%d", rows, cols, opt.rows, opt.cols)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	err = readVerified(lblPath, lblSpec, func(r io.Reader) error {
		var err error
		lab, err = readIDXLabels(r)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(lab) != count {
		return nil, fmt.Errorf("datasets: %s has %d images but %s has %d labels", imgPath, count, lblPath, len(lab))
	}
	d := &Dataset{
		Name:    opt.name,
		X:       make([]float32, len(pix)),
		Shape:   []int{1, rows, cols},
		Labels:  make([]int, count),
		Classes: opt.classes,
		N:       count,
	}
	for i, l := range lab {
		y := int(l) - opt.labelShift
		if y < 0 || y >= opt.classes {
			return nil, &FileError{Path: lblPath, Expected: lblSpec.expected(), URL: lblSpec.url,
				Err: fmt.Errorf("label %d of example %d outside [%d, %d)", l, i, opt.labelShift, opt.classes+opt.labelShift)}
		}
		d.Labels[i] = y
	}
	bytesToUnit(d.X, pix)
	if opt.transpose {
		transposeImages(d.X, count, rows, cols)
	}
	return d, nil
}

// bytesToUnit writes b[i]/255 to dst[i].
func bytesToUnit(dst []float32, b []byte) {
	var lut [256]float32
	for i := range lut {
		lut[i] = float32(i) / 255
	}
	for i, v := range b {
		dst[i] = lut[v]
	}
}

// transposeImages transposes each of count images stored column-major
// (cols×rows in memory) into row-major rows×cols, in place.
func transposeImages(x []float32, count, rows, cols int) {
	sz := rows * cols
	tmp := make([]float32, sz)
	for k := 0; k < count; k++ {
		img := x[k*sz : (k+1)*sz]
		copy(tmp, img)
		for r := 0; r < rows; r++ {
			for c := 0; c < cols; c++ {
				img[r*cols+c] = tmp[c*rows+r]
			}
		}
	}
}

var errNoDataDir = errors.New("no data directory: set --data-dir or the PRIVTRAIN_DATA environment variable")
