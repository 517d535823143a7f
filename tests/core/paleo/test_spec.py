"""Reading Paleo's JSON specs: shapes, parameters, blocks, FLOP totals, refusals."""

from __future__ import annotations

import json

import pytest

from core.errors import InputError
from core.paleo import layer_breakdown, load_net, parse_spec, read_spec_file
from core.paleo.cost import gradient_shapes_match
from core.paleo.layers import conv_output, pool_output
from core.paleo.spec import builtin_spec_names

DATA_PARALLEL_SPECS = ("alex_v2", "alex_v2_1gpu", "densenet_cifar", "inception_v3", "nin",
                       "overfeat", "resnet50", "vgg16")


def _spec(layers: dict, name: str = "t") -> str:
    return json.dumps({"name": name, "layers": layers})


DATA = {"data": {"type": "Input", "parents": [], "tensor": [8, 32, 32, 3]}}


def test_builtin_specs_are_all_there():
    assert set(builtin_spec_names()) == set(DATA_PARALLEL_SPECS) | {
        "alex_v2_2gpu", "alex_v2_4gpu", "alex_v2_8gpu"}


@pytest.mark.parametrize("h, k, s, padding, expected_out, expected_pad", [
    (224, 11, 4, "VALID", 54, 0),     # ceil((224 - 11 + 1) / 4) = ceil(53.5) = 54
    (27, 5, 1, "SAME", 27, 2),        # ceil(27/1); ((27-1)·1 + 5 - 27) // 2 = 2
    (28, 1, 2, "SAME", 14, -1),       # ((14-1)·2 + 1 - 28) // 2 = -1 // 2 = -1 (Paleo keeps it)
    (224, 7, 2, "SAME", 112, 2),      # ((112-1)·2 + 7 - 224) // 2 = 5 // 2 = 2
    (32, 3, 2, (1, 1), 16, 1),        # (32 + 2 - 3) // 2 + 1 = 16
])
def test_conv_output_follows_paleo_rules(h, k, s, padding, expected_out, expected_pad):
    out, pads, _ = conv_output("c", (1, h, h, 3), (k, k, 3, 8), (s, s), padding)
    assert out == (1, expected_out, expected_out, 8) and pads == (expected_pad, expected_pad)


def test_pool_output_gives_resnet50_its_55x55():
    # the Caffe converter writes pool1 as VALID: ceil((112 - 3 + 1) / 2) = 55, not 56
    assert pool_output("pool1", (1, 112, 112, 64), (3, 3), (2, 2), "VALID") == (1, 55, 55, 64)
    assert pool_output("p", (1, 35, 35, 8), (3, 3), (1, 1), "SAME") == (1, 35, 35, 8)
    with pytest.raises(InputError, match="p: expected pooling padding 'VALID' or 'SAME'"):
        pool_output("p", (1, 8, 8, 1), (2, 2), (2, 2), [1, 1])


def test_tiny_spec_shapes_and_parameters():
    net = parse_spec(_spec({
        **DATA,
        "conv": {"type": "Convolution", "parents": ["data"], "filter": [3, 3, -1, 16],
                 "strides": [1, 2, 2, 1], "padding": "SAME"},
        "pool": {"type": "Pooling", "parents": ["conv"], "ksize": [1, 2, 2, 1],
                 "strides": [1, 2, 2, 1], "padding": "VALID"},
        "fc": {"type": "InnerProduct", "parents": ["pool"], "num_outputs": 10},
        "prob": {"type": "Softmax", "parents": ["fc"]},
    }), source="tiny.json")
    conv, pool, fc, prob = net.layers[1:]
    assert conv.filters == (3, 3, 3, 16) and conv.output == (8, 16, 16, 16)  # -1 -> 3 channels
    assert conv.backprop is False                                          # reads data
    assert pool.output == (8, 8, 8, 16)
    assert fc.inputs == ((8, 8 * 8 * 16),) and fc.output == (8, 10)        # flattened
    assert prob.output == (8, 10)
    # conv 3·3·3·16 + 16 = 448; fc 1024·10 + 10 = 10,250
    assert net.n_params == 448 + 10250 and net.params_bytes == 4 * 10698
    assert net.name == "tiny" and net.source == "tiny.json" and net.batch_size == 8


def test_with_batch_replaces_every_batch_dimension():
    net = load_net("alex_v2").with_batch(3)
    assert all(s[0] == 3 for lay in net.layers for s in (*lay.inputs, lay.output))
    assert net.batch_size == 3


@pytest.mark.parametrize("name, millions", [
    # PALEO_MODEL.md section 1 (shipped nets) and section 7 (FLOP table)
    ("alex_v2", 50.30), ("alex_v2_1gpu", 49.57), ("vgg16", 138.36), ("inception_v3", 23.73),
    ("nin", 7.60), ("overfeat", 145.70), ("resnet50", 25.53),
])
def test_parameter_counts_match_paleo(name, millions):
    assert round(load_net(name).n_params / 1e6, 2) == millions


def test_alexnet_parameter_bytes_match_the_worked_example():
    # PALEO_MODEL.md: AlexNet apply reads 201,215,648 bytes = 4 · 50,303,912 parameters
    net = load_net("alex_v2")
    assert net.n_params == 50_303_912 and net.params_bytes == 201_215_648


@pytest.mark.parametrize("name, fwd, bwd", [
    # PALEO_MODEL.md section 7: GFLOP per image, gemm path (forward, backward)
    ("alex_v2", 1.475, 4.070), ("vgg16", 30.95, 71.58), ("inception_v3", 11.32, 25.02),
    ("resnet50", 7.67, 17.38), ("nin", 1.94, 3.68), ("overfeat", 5.30, 18.54),
])
def test_flop_totals_match_paleo_table(name, fwd, bwd):
    df = layer_breakdown(load_net(name), device="K80", batch_size=1, paleo_compatible=True)
    digits = 3 if name == "alex_v2" else 2
    assert round(df.fwd_flops.sum() / 1e9, digits) == fwd
    assert round(df.bwd_flops.sum() / 1e9, digits) == bwd


@pytest.mark.parametrize("name", DATA_PARALLEL_SPECS)
def test_every_spec_passes_paleos_gradient_shape_assertions(name):
    net = load_net(name)
    convs = [lay for lay in net.layers if lay.kind == "conv2d"]
    assert convs and all(gradient_shapes_match(lay) for lay in convs)


@pytest.mark.parametrize("name", DATA_PARALLEL_SPECS)
def test_layers_come_in_topological_order(name):
    seen: set[str] = set()
    for layer in load_net(name).layers:
        assert set(layer.parents) <= seen
        seen.add(layer.name)


def test_blocks_namespaces_parents_and_endpoints():
    net = load_net("inception_v3")
    by_name = {lay.name: lay for lay in net.layers}
    # a sublayer with "parents": [] inherits the block's parents, resolved through endpoints
    assert by_name["Mixed_5c/Branch_0/Conv2d_0a_1x1"].parents == ("Mixed_5b/concat",)
    # a sublayer's own parents are prefixed with the block name
    assert by_name["Mixed_5b/Branch_1/Conv2d_0b_5x5"].parents == ("Mixed_5b/Branch_1/Conv2d_0a_1x1",)
    # 64 + 64 + 96 + 32 channels concatenated at 35x35
    assert by_name["Mixed_5b/concat"].output == (64, 35, 35, 256)
    assert by_name["softmax"].output == (64, 1000)
    # branches are listed one after the other (as Paleo's walker lists them)
    names = [lay.name for lay in net.layers]
    assert names.index("Mixed_5b/Branch_1/Conv2d_0b_5x5") < names.index("Mixed_5b/Branch_2/Conv2d_0a_1x1")


def test_block_can_be_named_as_parent_through_its_endpoint():
    net = parse_spec(_spec({
        **DATA,
        "B": {"type": "Block", "parents": ["data"], "endpoint": "c",
              "layers": {"c": {"type": "Convolution", "parents": [], "filter": [1, 1, 3, 4],
                               "strides": [1, 1, 1, 1], "padding": "VALID"}}},
        "after": {"type": "Dropout", "parents": ["B"], "dropout_keep_prob": 0.5},
    }))
    assert [lay.name for lay in net.layers] == ["data", "B/c", "after"]
    assert net.layers[2].parents == ("B/c",) and net.layers[2].output == (8, 32, 32, 4)


def test_resnet50_and_densenet_specs_read_with_generic_and_elementwise_layers():
    resnet = load_net("resnet50")
    kinds = {lay.type: lay.kind for lay in resnet.layers}
    assert kinds["Elementwise"] == "free" and kinds["InnerProduct"] == "innerproduct"
    dense = load_net("densenet_cifar")
    generic = [lay for lay in dense.layers if lay.type in ("BatchNorm", "Accuracy")]
    assert len(generic) == 40 and all(lay.kind == "free" and lay.params == 0 for lay in generic)
    by_name = {lay.name: lay for lay in dense.with_batch(1).layers}
    # DenseNet-40, growth 12: 16 + 3 blocks · 12 layers · 12 = 448 channels at 8x8; the
    # spec's Pooling3 is 3x3 stride 1 VALID -> 6x6; the fc sees 6·6·448 = 16,128 inputs
    assert by_name["Pooling3"].output == (1, 6, 6, 448)
    assert by_name["InnerProduct1"].inputs == ((1, 16128),)
    assert by_name["InnerProduct1"].params == 16128 * 10 + 10


@pytest.mark.parametrize("k", [2, 4, 8])
def test_model_parallel_specs_are_refused_with_the_file_name(k):
    with pytest.raises(InputError, match=rf"alex_v2_{k}gpu.json: expected a data-parallel spec; "
                                         rf"got the ModelParallel block 'parallel_fc67' \(splits={k}\)"):
        load_net(f"alex_v2_{k}gpu")


@pytest.mark.parametrize("text, pattern", [
    ("{not json", r"bad.json: expected a JSON document; got invalid JSON"),
    ("[1, 2]", r"bad.json: expected an object with a 'layers' object; got list"),
    (_spec({"x": {"type": "Input", "parents": [], "tensor": [1, 2]}}),
     r"bad.json: expected an Input layer named 'data'; got none"),
    (_spec({**DATA, "c": {"type": "Convolution", "parents": ["nope"]}}),
     r"bad.json: layer 'c': expected parents among the spec's layers; got unknown parent 'nope'"),
    (_spec({**DATA, "c": {"type": "Convolution", "parents": ["data"], "filter": [3, 3, 4, 8],
                          "strides": [1, 1, 1, 1], "padding": "SAME"}}),
     r"bad.json: layer 'c': expected filter input channels = 3"),
    (_spec({**DATA, "c": {"type": "Convolution", "parents": ["data"], "filter": [3, 3, 3],
                          "strides": [1, 1, 1, 1], "padding": "SAME"}}),
     r"layer 'c': expected 'filter' as a list of 4 integers; got \[3, 3, 3\]"),
    (_spec({**DATA, "c": {"type": "Convolution", "parents": ["data"], "filter": [3, 3, 3, 4],
                          "strides": [1, 1, 1, 1], "padding": "FULL"}}),
     r"layer 'c': expected padding 'VALID', 'SAME' or \[ph, pw\]; got 'FULL'"),
    (_spec({**DATA, "c": {"type": "Convolution", "parents": ["data"], "filter": [64, 64, 3, 4],
                          "strides": [1, 1, 1, 1], "padding": "VALID"}}),
     r"layer 'c': expected a filter 64x64 that fits the 32x32 input"),
    (_spec({**DATA, "d": {"type": "Deconvolution", "parents": ["data"]}}),
     r"layer 'd': expected a supported layer type; got 'Deconvolution'"),
    (_spec({**DATA, "c": {"type": "Dropout", "parents": "data"}}),
     r"layer 'c': expected 'parents' as a list of names"),
    (_spec({**DATA, "a": {"type": "Elementwise", "parents": ["data", "p"]},
            "p": {"type": "Pooling", "parents": ["data"], "ksize": [1, 2, 2, 1],
                  "strides": [1, 2, 2, 1], "padding": "VALID"}}),
     r"layer 'a': expected inputs of one shape"),
])
def test_bad_specs_are_refused_with_file_and_problem(text, pattern):
    with pytest.raises(InputError, match=pattern):
        parse_spec(text, source="bad.json")


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match=r"nope.json: expected a readable Paleo JSON spec"):
        read_spec_file(tmp_path / "nope.json")


def test_load_net_resolution_order(tmp_path):
    assert load_net("alex_v2.json").name == "alex_v2"
    assert load_net("resnet50").source == "resnet50.json"            # Paleo's Caffe spec
    assert load_net("torch:resnet50").name == "torch:resnet50"        # torch model
    assert load_net("resnet20").name == "torch:resnet20"              # no spec of that name
    path = tmp_path / "mine.json"
    path.write_text(_spec({**DATA, "d": {"type": "Dropout", "parents": ["data"]}}))
    assert load_net(str(path)).name == "mine"
    with pytest.raises(InputError, match=r"net: expected a .json spec path, a built-in spec .* "
                                         r"got 'alexnet'"):
        load_net("alexnet")
