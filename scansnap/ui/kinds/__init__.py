"""One package per kind of run for the pages: its URL state, its actions, its live area and charts
(the synthetic kind's page is the Lab, the text kind's the Real text page).  How the Runs page shows a
stored run of each kind is its :class:`~scansnap.ui.kind_views.KindView`."""
