"""Real text (issue 15): a small causal Transformer language model, its word-level tokenizer,
its trainer and the attention statistics of Scan & Snap Fig. 7 and JoMA's real-data figure.

Pure torch/numpy; no I/O: the corpora are read by ``scansnap.service.corpora`` and handed in as
:class:`scansnap.kinds.text.science.data.CorpusText`.
"""
