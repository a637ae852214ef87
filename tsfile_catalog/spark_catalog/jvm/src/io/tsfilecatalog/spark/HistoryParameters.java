package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.NamedRelation;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.Assignment;
import org.apache.spark.sql.catalyst.plans.logical.DeleteFromTable;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.MergeIntoTable;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias$;
import org.apache.spark.sql.catalyst.plans.logical.UpdateTable;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.catalyst.trees.Origin;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code UPDATE}, {@code DELETE FROM} and {@code MERGE INTO} of a catalog table through {@code
 * spark.sql} record in the history the parameters {@code Catalog.sql}'s own statement records
 * ({@code predicate}, an UPDATE's {@code set}), which the delegate decides from the statement's
 * text ({@code tsfile_catalog/spark_catalog/history_parameters.py}).
 *
 * <p>A hint rule: it sees the statement as Spark parsed it, before its analysis rewrites it into
 * {@code ReplaceData}, {@code WriteDelta} or an append, with the text the user wrote (the
 * parser's origin of the statement and of its condition; Spark's SQL of the condition where
 * there is no text, a DataFrame's {@code mergeInto}). The target becomes the table marked with
 * those parameters ({@link TsFileTable#recording}), which ride to its write as an option and to
 * a DELETE Spark answers in metadata ({@link TsFileTable#deleteWhere}); nothing in them changes
 * what the statement reads or writes. Without the extensions the history has no such
 * parameters.
 */
final class HistoryParameters extends Rule<LogicalPlan> {
  private final SparkSession session;

  HistoryParameters(SparkSession session) {
    this.session = session;
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    String operation;
    LogicalPlan target;
    Expression condition;
    List<String> set = new ArrayList<>();
    if (plan instanceof UpdateTable) {
      UpdateTable update = (UpdateTable) plan;
      operation = "UPDATE";
      target = update.table();
      condition = update.condition().isDefined() ? update.condition().get() : null;
      for (Assignment assignment : CollectionConverters.asJava(update.assignments())) {
        set.add(name(assignment.key()));
      }
    } else if (plan instanceof DeleteFromTable) {
      operation = "DELETE";
      target = ((DeleteFromTable) plan).table();
      condition = ((DeleteFromTable) plan).condition();
    } else if (plan instanceof MergeIntoTable) {
      operation = "MERGE";
      target = ((MergeIntoTable) plan).targetTable();
      condition = ((MergeIntoTable) plan).mergeCondition();
    } else {
      return plan;
    }
    SubqueryAlias alias = target instanceof SubqueryAlias ? (SubqueryAlias) target : null;
    LogicalPlan named = alias == null ? target : alias.child();
    if (!(named instanceof NamedRelation)) {
      return plan;
    }
    MergeSchemaWrites.Target found = MergeSchemaWrites.target(session, (NamedRelation) named);
    if (found == null || found.table.isRecording()) {
      return plan;
    }
    ObjectNode request = Client.object();
    request.put("operation", operation);
    request.put("text", text(plan.origin()));
    request.put("condition", condition == null ? null : condition(condition));
    ArrayNode columns = request.putArray("set");
    set.forEach(columns::add);
    JsonNode parameters = Client.call("history_parameters", request);
    LogicalPlan marked = MergeSchemaWrites.relation(found, found.table.recording(parameters));
    if (alias != null) {
      marked = alias.withNewChildren(CollectionConverters.asScala(List.of(marked)).toSeq());
    } else {
      // Named as Spark's own resolution names it (catalog, namespace, name), so that a
      // condition may qualify a column with the table's name.
      List<String> qualifier = new ArrayList<>();
      qualifier.add(found.catalog.name());
      qualifier.addAll(List.of(found.ident.namespace()));
      qualifier.add(found.ident.name());
      marked = SubqueryAlias$.MODULE$.apply(CollectionConverters.asScala(qualifier).toSeq(), marked);
    }
    // The statements' fields differ between Spark versions; the target is the first.
    List<Object> fields = new ArrayList<>();
    CollectionConverters.asJava(plan.productIterator()).forEachRemaining(fields::add);
    fields.set(0, marked);
    return plan.makeCopy(fields.toArray());
  }

  /** The text the parser read for a node of {@code origin}, or null (no SQL text). */
  private static String text(Origin origin) {
    if (origin.sqlText().isEmpty() || origin.startIndex().isEmpty() || origin.stopIndex().isEmpty()) {
      return null;
    }
    String sql = origin.sqlText().get();
    int start = (Integer) origin.startIndex().get();
    int stop = (Integer) origin.stopIndex().get();
    return start < 0 || stop < start || stop >= sql.length() ? null : sql.substring(start, stop + 1);
  }

  /** The condition as the user wrote it, else as Spark writes it in SQL, else null. */
  private static String condition(Expression condition) {
    String written = text(condition.origin());
    if (written != null) {
      return written;
    }
    try {
      return condition.sql();
    } catch (RuntimeException noSqlForIt) {
      return null; // an unresolved expression without a SQL form: no predicate recorded
    }
  }

  /** The column an assignment sets: the last part of its name as written. */
  private static String name(Expression key) {
    if (key instanceof UnresolvedAttribute) {
      List<String> parts = CollectionConverters.asJava(((UnresolvedAttribute) key).nameParts());
      return parts.get(parts.size() - 1);
    }
    return key.sql();
  }
}
