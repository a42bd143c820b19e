// The FX graph's labels: a parameter's name keeps its layer when the layout cut it.
import test from "node:test";
import assert from "node:assert/strict";
import { source } from "./load.mjs";

const { shortName } = await source("cull.js");
const param = (layer, rest) => `l_model_modules_transformer_modules_h_modules_${layer}_modules_${rest}_`;

test("a parameter's label says its layer and its own name, within the width", () => {
  assert.equal(shortName(param(0, "attn_modules_c_attn_parameters_weight"), 21), "h.0…c_attn.weight");
  assert.equal(shortName(param(11, "ln_1_parameters_bias"), 21), "h.11.ln_1.bias");
  assert.equal(shortName("l_model_modules_transformer_modules_wte_parameters_weight_", 21), "…wte.weight");
  assert.equal(shortName("linear_3", 21), "linear_3", "a short name stays as it is");
  for (const width of [8, 12, 21, 30]) {
    const labels = new Set();
    for (let layer = 0; layer < 12; layer++) {
      for (const rest of ["attn_modules_c_attn_parameters_weight", "attn_modules_c_proj_parameters_bias",
        "mlp_modules_c_fc_parameters_weight", "ln_2_parameters_weight"]) {
        const label = shortName(param(layer, rest), width);
        assert.ok(label.length <= width, `${label} is wider than ${width}`);
        labels.add(label);
      }
    }
    // from 12 characters, every layer's parameters read apart
    if (width >= 12) assert.ok([...labels].filter((l) => l.startsWith("h.7")).length >= 2, [...labels].join(" "));
  }
  for (let a = 0; a < 12; a++) {
    for (let b = a + 1; b < 12; b++) {
      const rest = "attn_modules_c_attn_parameters_weight";
      assert.notEqual(shortName(param(a, rest), 21), shortName(param(b, rest), 21));
    }
  }
});
