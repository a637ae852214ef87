package io.tsfilecatalog.spark;

import java.util.function.Function;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import scala.runtime.AbstractFunction1;

/** The one plan walk the extensions' rules share. */
final class Plans {
  private Plans() {}

  /**
   * {@code plan} with each node that {@code replacement} answers replaced by its answer, top
   * down: a node it answers null for is kept and its children are walked; a replaced node's
   * children are not (the replacement stands for the whole subtree). Spark's own {@code
   * transformDown} needs a Scala partial function, which Java cannot write briefly.
   */
  static LogicalPlan replaceDown(
      LogicalPlan plan, Function<LogicalPlan, LogicalPlan> replacement) {
    LogicalPlan replaced = replacement.apply(plan);
    if (replaced != null) {
      return replaced;
    }
    return plan.mapChildren(
        new AbstractFunction1<LogicalPlan, LogicalPlan>() {
          @Override
          public LogicalPlan apply(LogicalPlan child) {
            return replaceDown(child, replacement);
          }
        });
  }
}
