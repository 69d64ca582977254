"""A dense level (a densenet's block: every layer reads every earlier one) gets fewer crossing-minimisation sweeps,
so opening it stays within the view's 200 ms; its order is still a layered order of every member."""

from inspector.core.graph.layout.levels import SWEEP_BUDGET, order_level, sweeps


def test_sweeps_by_hand():
    assert SWEEP_BUDGET == 100_000
    assert sweeps(1_000, 100) == 100  # 100 x 1,000 = the budget
    assert sweeps(2_325, 100) == 43  # 25 members and C(25, 3) = 2,300 dummies: 100,000 // 2,325
    assert sweeps(18_473, 100) == 5  # 49 members and C(49, 3) = 18,424 dummies: 5 at least
    assert sweeps(10**6, 100) == 5  # the floor
    assert sweeps(10, 3) == 3 and sweeps(10**6, 3) == 3  # never more than asked, never fewer than 5 or that


def test_a_dense_block_is_ordered_in_layers():
    n = 49
    members = [f"layer{i}" for i in range(n)]
    edges = {(members[i], members[j]) for i in range(n) for j in range(i + 1, n)}
    order = order_level(members, edges)
    own = [tuple(s for s in layer if isinstance(s, str)) for layer in order.layers]
    assert own == [(m,) for m in members]  # the longest path puts one layer per member, in their order
    dummies = sum(1 for layer in order.layers for s in layer if not isinstance(s, str))
    assert dummies == sum(j - i - 1 for i in range(n) for j in range(i + 1, n)) == 18_424
