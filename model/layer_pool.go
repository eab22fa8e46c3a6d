package model

import (
	"errors"
	"fmt"
)

// poolShape checks a pooling layer's input and returns its geometry.
func poolShape(in Shape, k, stride int) (*poolGeom, error) {
	if in.Layout != HWC {
		return nil, errors.New("pooling must follow a convolution (before one, images are in (C, H, W) order)")
	}
	if in.H < k || in.W < k {
		return nil, fmt.Errorf("input too small: pool %d×%d sees %d×%d", k, k, in.H, in.W)
	}
	oh, ow := (in.H-k)/stride+1, (in.W-k)/stride+1
	return &poolGeom{c: in.C, inH: in.H, inW: in.W, k: k, stride: stride, outH: oh, outW: ow}, nil
}

func (g *poolGeom) outShape() Shape { return Shape{Layout: HWC, C: g.c, H: g.outH, W: g.outW} }
