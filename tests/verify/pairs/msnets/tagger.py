from mindspore import nn


class Tagger(nn.Cell):
    def __init__(self, vocab=50, dim=8, hidden=6, tags=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.out = nn.Dense(2 * hidden, tags)

    def construct(self, tokens):
        h, _ = self.lstm(self.emb(tokens))
        return {"tags": self.out(h), "mask": None}
