"""torch.nn.modules.rnn's names (code written against torch's module layout:
``nn.modules.rnn.X``); the classes are pf.nn's."""

from .. import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]
