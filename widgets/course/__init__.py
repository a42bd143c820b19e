"""What the lessons use beside the viewer: the exercises' checkers and the course site.

exercises     ask, check the learner's answer, hint, reveal (``from widgets.course.exercises
              import predict_stack``)
site          the lessons as static pages with working viewers (``./lab site``)
stored        the widget state a lesson stores: its viewers' recordings, never their module
"""
