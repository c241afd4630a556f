# Added for the corpus (see case.json): the "INIT MODEL" lines of pytorch_ner/main.py, with the
# config values written in and `str_to_class(module_name="torch.nn", class_name="LSTM")` as nn.LSTM.
import torch.nn as nn

from .architecture import BiLSTM
from .embedding import Embedding
from .linear import LinearHead
from .rnn import DynamicRNN


def build_model():
    embedding_layer = Embedding(
        num_embeddings=50,
        embedding_dim=16,
    )

    rnn_layer = DynamicRNN(
        rnn_unit=nn.LSTM,
        input_size=16,  # ref to emb_dim
        hidden_size=12,
        num_layers=1,
        dropout=0,
        bidirectional=True,
    )

    linear_head = LinearHead(
        linear_head=nn.Linear(
            in_features=(2 * 12),
            out_features=5,
        ),
    )

    model = BiLSTM(
        embedding_layer=embedding_layer,
        rnn_layer=rnn_layer,
        linear_head=linear_head,
    )
    return model
