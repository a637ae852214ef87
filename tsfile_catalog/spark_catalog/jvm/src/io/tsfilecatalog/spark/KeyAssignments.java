package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.ExperimentalMethods;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.RowLevelWrite;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.connector.write.RowLevelOperation;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * A check, run with the session's extra optimizations, that refuses an {@code UPDATE} of a
 * catalog table that sets a TAG column or {@code time} (the table key), with the message
 * {@code Catalog.sql}'s UPDATE gives, before anything is written.
 *
 * <p>Spark's group-based UPDATE is a {@code ReplaceData} over a projection that gives every
 * column either itself (after Spark's simplification of {@code if(c) x else x}) or its new
 * value; a delta ({@code WriteDelta}, a {@code last} table's UPDATE) is one over the matching
 * rows, with the same shape. The columns given anything else are the ones the statement sets,
 * which the delegate judges. A copy-on-write UPDATE whose condition holds a subquery (a union
 * of two projections) and MERGE are not checked.
 */
public final class KeyAssignments extends Rule<LogicalPlan> {
  /** Adds the rule to {@code session}'s extra optimizations, once. */
  public static void install(SparkSession session) {
    ExperimentalMethods experimental = session.experimental();
    List<Rule<LogicalPlan>> rules =
        new ArrayList<>(CollectionConverters.asJava(experimental.extraOptimizations()));
    if (rules.stream().noneMatch(rule -> rule instanceof KeyAssignments)) {
      rules.add(new KeyAssignments());
      experimental.extraOptimizations_$eq(CollectionConverters.asScala(rules).toSeq());
    }
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    plan.foreach(
        new AbstractFunction1<LogicalPlan, BoxedUnit>() {
          @Override
          public BoxedUnit apply(LogicalPlan node) {
            check(node);
            return BoxedUnit.UNIT;
          }
        });
    return plan;
  }

  private static void check(LogicalPlan node) {
    if (!(node instanceof RowLevelWrite)) {
      return;
    }
    RowLevelWrite write = (RowLevelWrite) node;
    if (!RowCounts.ours(write.operation())
        || write.operation().command() != RowLevelOperation.Command.UPDATE
        || !(write.query() instanceof Project)) {
      return;
    }
    TsFileTable table =
        write.operation() instanceof TsFileDeltaOperation
            ? ((TsFileDeltaOperation) write.operation()).table()
            : ((TsFileRowLevelOperation) write.operation()).table();
    ArrayNode set = Client.JSON.createArrayNode();
    for (NamedExpression column :
        CollectionConverters.asJava(((Project) write.query()).projectList())) {
      Expression value =
          column instanceof Alias ? ((Alias) column).child() : (Expression) column;
      boolean kept =
          value instanceof Attribute && ((Attribute) value).name().equalsIgnoreCase(column.name());
      if (!kept) {
        set.add(column.name());
      }
    }
    if (set.isEmpty()) {
      return;
    }
    ObjectNode request = Client.object();
    request.set("scan", table.scanDescription());
    request.set("columns", set);
    JsonNode refusal = Client.call("set_refusal", request);
    if (refusal != null && !refusal.isNull()) {
      throw Client.refused(refusal.asText());
    }
  }
}
