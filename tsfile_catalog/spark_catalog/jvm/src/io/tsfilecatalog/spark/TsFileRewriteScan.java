package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.SupportsRuntimeV2Filtering;
import org.apache.spark.sql.types.StructType;

/**
 * The scan of a copy-on-write {@link TsFileRowLevelOperation}, which Spark may narrow at run
 * time: its {@code RowLevelOperationRuntimeGroupFiltering} runs the statement's condition (a
 * MERGE's join with its source) first and hands {@link #filter} an {@code IN} predicate on
 * {@link #filterAttributes} (one TAG column, which the delegate picks) with the values the
 * matching rows hold. The delegate plans the scan again with them, and the parts it then reads are the ones
 * the write replaces ({@link TsFileRowLevelOperation#filtered}).
 */
final class TsFileRewriteScan implements Scan, SupportsRuntimeV2Filtering {
  /**
   * Past this many values an {@code IN} goes to the delegate as the range they span: it
   * prunes parts by statistics alike, and is not one literal per matching row (time).
   */
  private static final int MAX_IN_VALUES = 1_000;

  private final ObjectNode request;
  private final TsFileRowLevelOperation operation;
  private final NamedReference[] filterAttributes;
  private Scan current;

  TsFileRewriteScan(ObjectNode request, JsonNode plan, TsFileRowLevelOperation operation) {
    this.request = request;
    this.operation = operation;
    List<NamedReference> columns = new ArrayList<>();
    for (JsonNode name : plan.path("filter_columns")) {
      columns.add(Expressions.column(name.asText()));
    }
    this.filterAttributes = columns.toArray(new NamedReference[0]);
    this.current = TsFileScanBuilder.scan(plan, null); // a rewrite reads every row: no answer
  }

  @Override
  public NamedReference[] filterAttributes() {
    return filterAttributes;
  }

  @Override
  public synchronized void filter(Predicate[] predicates) {
    ObjectNode again = request.deepCopy();
    ArrayNode list = again.putArray("runtime");
    for (Predicate predicate : predicates) {
      list.add(shortened(predicate));
    }
    JsonNode plan = Client.call("plan_rewrite_scan", again);
    operation.filtered(plan.get("rewrite"));
    current = TsFileScanBuilder.scan(plan, null);
  }

  /** A long {@code IN} list as {@code column >= least AND column <= greatest}. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static ObjectNode shortened(Predicate predicate) {
    Expression[] children = predicate.children();
    if (!"IN".equals(predicate.name()) || children.length - 1 <= MAX_IN_VALUES) {
      return Scans.toJson(predicate);
    }
    Literal<?> least = null;
    Literal<?> greatest = null;
    for (int i = 1; i < children.length; i++) {
      if (!(children[i] instanceof Literal)) {
        return Scans.toJson(predicate);
      }
      Literal<?> literal = (Literal<?>) children[i];
      Object value = literal.value();
      if (!(value instanceof Comparable)) {
        return Scans.toJson(predicate); // a null or an uncomparable value: the list as it is
      }
      if (least == null || ((Comparable) value).compareTo(least.value()) < 0) {
        least = literal;
      }
      if (greatest == null || ((Comparable) value).compareTo(greatest.value()) > 0) {
        greatest = literal;
      }
    }
    ObjectNode out = Client.object();
    out.put("op", "AND");
    ArrayNode args = out.putArray("args");
    args.add(comparison(">=", children[0], least));
    args.add(comparison("<=", children[0], greatest));
    return out;
  }

  private static ObjectNode comparison(String op, Expression column, Literal<?> bound) {
    ObjectNode out = Client.object();
    out.put("op", op);
    ArrayNode args = out.putArray("args");
    args.add(Scans.toJson(column));
    args.add(Scans.toJson(bound));
    return out;
  }

  @Override
  public StructType readSchema() {
    return current.readSchema();
  }

  @Override
  public synchronized String description() {
    return current.description();
  }

  @Override
  public synchronized Batch toBatch() {
    return current.toBatch();
  }

  @Override
  public CustomMetric[] supportedCustomMetrics() {
    return current.supportedCustomMetrics();
  }
}
