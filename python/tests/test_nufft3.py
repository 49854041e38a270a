# SPDX-License-Identifier: Apache-2.0
"""Type-3 NUFFT against direct sums and, where installed, finufft."""
import numpy as np
import pytest

import sfft


def points(rng, dim, n, k):
    xs = [rng.uniform(-np.pi, np.pi, n) * (1 + d) for d in range(dim)]
    ss = [rng.uniform(-30, 30, k) / (1 + d) for d in range(dim)]
    return xs, ss


def direct(xs, c, ss, isign):
    """F[..., k] = sum_j c[..., j] exp(isign 1j (x_j s_k + ...)) for c of shape (N,) or (n_trans, N)."""
    phase = sum(np.outer(x, s) for x, s in zip(xs, ss))
    return np.asarray(c, np.complex128) @ np.exp(isign * 1j * phase)


def rel_err(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("dtype, eps", [(np.complex128, 1e-6), (np.complex128, 1e-11), (np.complex64, 1e-4)])
@pytest.mark.parametrize("isign", [1, -1])
def test_matches_direct_sum(rng, dim, dtype, eps, isign):
    xs, ss = points(rng, dim, 300, 200)
    c = (rng.standard_normal(300) + 1j * rng.standard_normal(300)).astype(dtype)
    F = sfft.nufft3(tuple(xs), c, tuple(ss), eps=eps, isign=isign)
    assert F.dtype == dtype and F.shape == (200,)
    assert rel_err(F, direct(xs, c, ss, isign)) < 10 * eps


def test_finufft_signatures_and_defaults(rng):
    (x, y, z), (s, t, u) = points(rng, 3, 100, 80)
    c = rng.standard_normal(100) + 1j * rng.standard_normal(100)
    np.testing.assert_allclose(sfft.nufft1d3(x, c, s, eps=1e-12), direct([x], c, [s], +1), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(sfft.nufft2d3(x, y, c, s, t, eps=1e-12, isign=-1), direct([x, y], c, [s, t], -1),
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(sfft.nufft3d3(x, y, z, c, s, t, u, eps=1e-12), direct([x, y, z], c, [s, t, u], 1),
                               rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dim", [1, 2, 3])
def test_matches_finufft(rng, dim):
    finufft = pytest.importorskip("finufft")
    xs, ss = points(rng, dim, 500, 400)
    ss = [s / dim for s in ss]  # a 3-D problem of the 1-D one's size
    c = rng.standard_normal((3, 500)) + 1j * rng.standard_normal((3, 500))
    ours = sfft.Plan(3, dim, n_trans=3, eps=1e-9)
    theirs = finufft.Plan(3, dim, n_trans=3, eps=1e-9)
    names = "xyz"[:dim] + "stu"[:dim]
    ours.setpts(**dict(zip(names, xs + ss)))
    theirs.setpts(**dict(zip(names, xs + ss)))
    F, G = ours.execute(c), theirs.execute(c)
    assert F.shape == G.shape == (3, 400)
    assert rel_err(F, G) < 1e-7


def test_plan_batch_reuse_and_kernels(rng):
    xs, ss = points(rng, 2, 250, 150)
    c = rng.standard_normal((4, 250)) + 1j * rng.standard_normal((4, 250))
    for kernel, eps, upsampfac in [("es", 1e-8, 0.0), ("es", 1e-8, 1.25), ("pswf", 1e-8, 0.0), ("pswf", 1e-6, 1.25),
                                   ("gaussian", 1e-6, 0.0)]:
        with sfft.Plan(3, 2, n_trans=4, eps=eps, isign=-1, kernel=kernel, upsampfac=upsampfac) as plan:
            plan.setpts(xs[0], xs[1], s=ss[0], t=ss[1])
            assert rel_err(plan.execute(c), direct(xs, c, ss, -1)) < 10 * eps
            xs2, ss2 = points(rng, 2, 90, 60)  # new points, same plan
            plan.setpts(x=xs2[0], y=xs2[1], s=ss2[0], t=ss2[1])
            out = np.empty((4, 60), np.complex128)
            assert plan.execute(c[:, :90], out=out) is out
            assert rel_err(out, direct(xs2, c[:, :90], ss2, -1)) < 10 * eps


def test_maxbatchsize_runs_the_batch_in_passes(rng):
    xs, ss = points(rng, 2, 250, 150)
    c = rng.standard_normal((5, 250)) + 1j * rng.standard_normal((5, 250))
    ref = direct(xs, c, ss, -1)
    for maxbatchsize in (0, 1, 2, 5):
        with sfft.Plan(3, 2, n_trans=5, eps=1e-9, isign=-1, maxbatchsize=maxbatchsize) as plan:
            plan.setpts(xs[0], xs[1], s=ss[0], t=ss[1])
            assert rel_err(plan.execute(c), ref) < 1e-8
    with pytest.raises(sfft.InvalidArgumentError, match="maxbatchsize"):
        sfft.Plan(3, 2, n_trans=5, maxbatchsize=-1)


def test_conversions_and_non_contiguous(rng):
    xs, ss = points(rng, 1, 200, 100)
    c = rng.standard_normal(400) + 1j * rng.standard_normal(400)
    want = direct(xs, c[::2], ss, 1)
    F = sfft.nufft3(xs[0].astype(np.float32), c[::2], ss[0], eps=1e-6)  # float32 coords -> float64
    assert rel_err(F, direct([xs[0].astype(np.float32).astype(np.float64)], c[::2], ss, 1)) < 1e-5
    F = sfft.nufft3(list(xs[0]), c.real[::2].copy(), ss[0], eps=1e-9)  # list coords, real strengths
    assert rel_err(F, direct(xs, c.real[::2], ss, 1)) < 1e-8
    with sfft.Plan(3, 1, eps=1e-9) as plan:
        wide = np.stack([xs[0], xs[0]], axis=1)  # a column view: non-contiguous
        plan.setpts(wide[:, 0], s=ss[0][::-1][::-1])
        assert rel_err(plan.execute(c[::2]), want) < 1e-8
        out = np.zeros((100, 2), np.complex128)
        plan.execute(c[::2], out=out[:, 1])  # non-contiguous out, written through a temporary
        assert rel_err(out[:, 1], want) < 1e-8 and not out[:, 0].any()
    with sfft.Plan(3, 1, eps=1e-4, dtype=np.complex64) as plan:  # complex128 strengths -> complex64
        plan.setpts(xs[0], s=ss[0])
        F = plan.execute(c[::2])
        assert F.dtype == np.complex64 and rel_err(F, want) < 1e-3


def test_bad_inputs(rng):
    xs, ss = points(rng, 2, 50, 40)
    c = np.ones(50, np.complex128)
    with pytest.raises(sfft.InvalidArgumentError, match=r"nufft3_setpts: x\[7\] is NaN"):
        x = xs[0].copy()
        x[7] = np.nan
        sfft.nufft3((x, xs[1]), c, tuple(ss))
    with pytest.raises(sfft.InvalidArgumentError, match=r"nufft3_setpts: t\[3\] is"):
        t = ss[1].copy()
        t[3] = np.inf
        sfft.nufft3(tuple(xs), c, (ss[0], t))
    with pytest.raises(sfft.InvalidArgumentError, match="nufft3_create: tol"):
        sfft.Plan(3, 1, eps=1e-15)
    with pytest.raises(sfft.InvalidArgumentError, match="nufft3_create: dim"):
        sfft.Plan(3, 4)
    with pytest.raises(sfft.InvalidArgumentError, match="nufft3_set_options: .*Gaussian"):
        sfft.Plan(3, 1, eps=1e-12, kernel="gaussian")
    with pytest.raises(ValueError, match="type-3"):
        sfft.Plan(1, 1)
    with pytest.raises(ValueError, match="y has 49 points, x has 50"):
        sfft.nufft3((xs[0], xs[1][:49]), c, tuple(ss))
    with pytest.raises(ValueError, match="1 source and 2 target"):
        sfft.nufft3(xs[0], c, tuple(ss))
    plan = sfft.Plan(3, 2, n_trans=2)
    with pytest.raises(ValueError, match="setpts"):
        plan.execute(np.ones((2, 50)))
    with pytest.raises(ValueError, match="needs t"):
        plan.setpts(xs[0], xs[1], s=ss[0])
    with pytest.raises(ValueError, match="z given"):
        plan.setpts(xs[0], xs[1], np.ones(50), ss[0], ss[1])
    plan.setpts(xs[0], xs[1], s=ss[0], t=ss[1])
    with pytest.raises(ValueError, match=r"expected \(2, 50\)"):
        plan.execute(np.ones(50))
    with pytest.raises(TypeError, match="dtype"):
        plan.setpts(xs[0] + 0j, xs[1], s=ss[0], t=ss[1])
    with pytest.raises(TypeError, match="dtype"):
        plan.execute(np.ones((2, 50)), out=np.empty((2, 40), np.complex64))
    plan.close()
    with pytest.raises(ValueError, match="closed"):
        plan.setpts(xs[0], xs[1], s=ss[0], t=ss[1])


def test_empty_point_sets():
    F = sfft.nufft3(np.zeros(0), np.zeros(0, np.complex128), np.linspace(0, 1, 5))
    np.testing.assert_array_equal(F, np.zeros(5))
    assert sfft.nufft3(np.zeros(3), np.ones(3), np.zeros(0)).shape == (0,)
