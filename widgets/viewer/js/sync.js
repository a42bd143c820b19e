// Where the viewer is, kept in the widget's model (`compile`, `step`): sent to the kernel
// once stepping pauses, so that a learner's quick steps make one message, not one each.

const SAVE_DELAY = 60;   // ms: the step is sent to the kernel once stepping pauses

export class ModelSync {
  /** `where()`: the viewer's {compile, step} when the message goes (null: it is gone). */
  constructor(model, where) {
    this.model = model;
    this.where = where;
    this.timer = null;
    this.saving = false;   // true while our own change events run: the model is half set
  }

  /** Send where the viewer is once stepping pauses (each call puts the message off). */
  save() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      const at = this.where();
      const m = this.model;
      if (!at || (m.get("compile") === at.compile && m.get("step") === at.step)) return;
      this.saving = true;
      try {
        m.set("compile", at.compile);
        m.set("step", at.step);
      } finally {
        this.saving = false;
      }
      m.save_changes();
    }, SAVE_DELAY);
  }

  stop() {
    clearTimeout(this.timer);
    this.timer = null;
  }
}
