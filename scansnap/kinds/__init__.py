"""One package per kind of run, each in layers: ``science`` (config, data, model, trainer, metrics;
no I/O), ``service`` (its :class:`~scansnap.service.kinds.RunKind`: budget, store columns, export,
training) and ``ui`` (its page's URL state, actions, live area and charts; no torch).  How the Runs
page shows a stored run of each kind is its :class:`~scansnap.ui.kind_views.KindView`."""
