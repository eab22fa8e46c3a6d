package exactnoise

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/big"
	"testing"

	"github.com/privtrain/privtrain/randstream"
)

// The samples of a fixed stream are fixed: integer operations only, so
// every machine must produce these bits (a change of the sampler or of
// its tables changes the hash, and must say so in its commit).
func TestRoundedNormalGolden(t *testing.T) {
	g, err := NewRoundedNormal(0xb504f333f9de6485, 49)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]int64, 20000)
	g.Fill(randstream.FromSeed(2024).Stream("golden", 0), v)
	h := sha256.New()
	for _, x := range v {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(x)))
	}
	b, err := PTRThreshold(1, 1e-8)
	if err != nil {
		t.Fatal(err)
	}
	h.Write([]byte(b.RatString()))
	r := randstream.FromSeed(2024).Stream("golden-tail", 0)
	for i := 0; i < 2000; i++ {
		if LaplaceTail(r, new(big.Rat).Sub(b, big.NewRat(int64(i%40), 1)), big.NewRat(1, 1)) {
			h.Write([]byte{1})
		} else {
			h.Write([]byte{0})
		}
	}
	const want = "fe2d8c2303a18c272f9763a4cf760ded93f1363f08d113cea82d2bb2bba936a3"
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("hash of the fixed stream's samples %s, want %s", got, want)
	}
}
