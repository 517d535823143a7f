"""core.calibrate.methods: the methods' inputs (parameter counts from the torch definitions)."""

from __future__ import annotations

from core.calibrate.methods import architecture_parameters


def test_parameter_counts_come_from_the_torch_definitions():
    assert architecture_parameters("resnet20", "cifar10") == 269_722  # He et al. option A
    assert architecture_parameters("resnet18", "cifar10") == architecture_parameters("resnet18_cifar", "other")
    assert architecture_parameters("resnet8", "mnist1d") is not None
    assert architecture_parameters("resnet8", "other") is None


def test_the_design_matrices_are_scikit_learns_scaler_and_one_hot_encoder():
    """``design_matrices`` replaces ``ColumnTransformer([StandardScaler(), OneHotEncoder(handle_unknown="ignore")])``
    (its per-call overhead dominated a leave-one-architecture-out): the same numbers, including a constant
    column and a category the training rows lack."""
    import numpy as np
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from core.calibrate.methods import design_matrices

    rng = np.random.default_rng(0)
    train = pd.DataFrame({"depth": rng.integers(8, 110, 12).astype(float), "log10_params": rng.normal(6, 1, 12),
                          "const": 3.0, "gpu": rng.choice(["V100", "A100", "RTX 8000"], 12),
                          "block": rng.choice(["basic", "bottleneck"], 12)})
    test = train.sample(5, random_state=1).assign(gpu=["V100", "H100", "A100", "T4", "V100"])
    numeric, categorical = ["depth", "log10_params", "const"], ["gpu", "block"]
    reference = ColumnTransformer([("num", StandardScaler(), numeric),
                                   ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), categorical)])
    expected_train = reference.fit_transform(train)
    expected_test = reference.transform(test)
    got_train, got_test = design_matrices(train, test, numeric, tuple(categorical))
    np.testing.assert_allclose(got_train, expected_train, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_test, expected_test, rtol=1e-12, atol=1e-12)
    assert got_test[1, 3:6].tolist() == [0.0, 0.0, 0.0]        # H100: not among the training GPUs
