package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/model"
)

// TestConfigNetwork checks configurations that carry a network of their own
// (networks as data): it validates under a name of its own, a registered
// name or a bad network is rejected, and JSON and YAML config files carry
// it.
func TestConfigNetwork(t *testing.T) {
	nw := model.Network{Layers: model.Layers{model.Flatten{}, model.Dense{Out: 10}}}
	for _, tc := range []struct {
		name, model string
		nw          *model.Network
		want        string // "" for valid
	}{
		{"own network", "my-net", &nw, ""},
		{"registered name", "tfp-cnn", &nw, "registered architecture"},
		{"bad network", "my-net", &model.Network{Layers: model.Layers{model.Dense{}}}, "layer 0 (dense): out must be in [1,"},
		{"unknown name", "my-net", nil, `unknown model "my-net" (known: ` + strings.Join(model.Names(), ", ")},
	} {
		c := TrainDefaults()
		c.Model, c.Network = tc.model, tc.nw
		err := c.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"c.json": `{"model": "my-net", "network": {"init": "torch", "layers": [{"kind": "flatten"}, {"kind": "dense", "out": 10}]}}`,
		"c.yaml": "model: my-net\nnetwork:\n  init: torch\n  layers:\n    - kind: flatten\n    - {kind: dense, out: 10}\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		c := TrainDefaults()
		if err := LoadConfigFile(path, &c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := model.Network{Init: model.InitTorch, Layers: nw.Layers}
		if c.Model != "my-net" || !c.Network.Equal(&want) {
			t.Errorf("%s: model %q network %+v", name, c.Model, c.Network)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A misspelt key inside the network is an error.
	path := filepath.Join(dir, "typo.json")
	if err := os.WriteFile(path, []byte(`{"model": "my-net", "network": {"layers": [{"kind": "dense", "outs": 10}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := TrainDefaults()
	if err := LoadConfigFile(path, &c); err == nil {
		t.Error("misspelt network key accepted")
	}
}
