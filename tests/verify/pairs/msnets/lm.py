from mindspore import Parameter, nn, ops


class TiedLM(nn.Cell):
    """tie=False keeps a separate output matrix: same forward with copied weights, other gradients."""

    def __init__(self, vocab=40, dim=8, tie=True):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.norm = nn.LayerNorm((dim,))
        self.tie = tie
        if not tie:
            self.head_weight = Parameter(self.emb.embedding_table.copy(), name="head.weight")

    def construct(self, tokens):
        table = self.emb.embedding_table if self.tie else self.head_weight
        return ops.matmul(self.norm(self.emb(tokens)), table.T)
