"""Functions a module's other methods run (a detector's post-processing) are grouped by the method call, unless
that call also called a module: graphs written out by hand."""

from __future__ import annotations

import torch
from torch import nn

from inspector.core.graph import Group, record_graph


class Post(nn.Module):
    def forward(self, x):
        return x

    def squash(self, x):
        return (x * 2).clamp(0, 1)


class WithMethods(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.post = Post()

    def forward(self, x):
        y = self.features(x)  # calls a module: no group, though two functions follow it
        z = self.post.squash(y)  # another module's method, functions only: a group
        z = self.tidy(z)  # the model's own method, functions only: a group
        z = self.tidy(z)  # a second call: a second group
        return z + 1

    def features(self, x):
        return self.lin(x).sigmoid().tanh()

    def tidy(self, z):
        return z.abs().neg()


def test_a_method_that_ran_only_functions_is_a_group_one_per_call():
    graph = record_graph(WithMethods().eval(), torch.randn(1, 3))
    assert [(n.id, n.group) for n in graph.nodes] == [
        ("input", ""), ("lin", ""), ("sigmoid()", ""), ("tanh()", ""),
        ("mul()", "post.squash(...)"), ("clamp()", "post.squash(...)"),
        ("abs()", "tidy(...)"), ("neg()", "tidy(...)"), ("abs()#1", "tidy(...)#1"), ("neg()#1", "tidy(...)#1"),
        ("add()", ""), ("output", "")]
    assert graph.groups == (
        Group("post.squash(...)", "post", "Post", 0, "", ("mul()", "clamp()"), (), "squash"),
        Group("tidy(...)", "", "WithMethods", 0, "", ("abs()", "neg()"), (), "tidy"),
        Group("tidy(...)#1", "", "WithMethods", 1, "", ("abs()#1", "neg()#1"), (), "tidy"))
    closed = graph.closed()
    assert [n.id for n in closed.nodes] == ["input", "lin", "sigmoid()", "tanh()", "post.squash(...)", "tidy(...)",
                                            "tidy(...)#1", "add()", "output"]
    assert [(e.source, e.target) for e in closed.edges][3:7] == [
        ("tanh()", "post.squash(...)"), ("post.squash(...)", "tidy(...)"), ("tidy(...)", "tidy(...)#1"),
        ("tidy(...)#1", "add()")]
