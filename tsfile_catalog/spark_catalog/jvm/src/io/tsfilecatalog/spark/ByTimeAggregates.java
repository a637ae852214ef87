package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction;
import org.apache.spark.sql.catalyst.expressions.aggregate.Average;
import org.apache.spark.sql.catalyst.expressions.aggregate.Complete$;
import org.apache.spark.sql.catalyst.expressions.aggregate.Count;
import org.apache.spark.sql.catalyst.expressions.aggregate.Max;
import org.apache.spark.sql.catalyst.expressions.aggregate.MaxBy;
import org.apache.spark.sql.catalyst.expressions.aggregate.Min;
import org.apache.spark.sql.catalyst.expressions.aggregate.MinBy;
import org.apache.spark.sql.catalyst.expressions.aggregate.Sum;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * An aggregation with {@code max_by}/{@code min_by} over a catalog table's scan, answered from
 * statistics as a local relation.
 *
 * <p>Spark never offers {@code max_by}/{@code min_by} to a data source (its V2 aggregate
 * translation has no such function), so such an aggregation reaches the optimizer's end over a
 * scan of rows. This finds it there: an {@link Aggregate} grouped by columns (or none) whose
 * aggregate functions are {@code max_by}/{@code min_by} and the {@code count}, {@code sum},
 * {@code avg}, {@code min} and {@code max} the scan's pushdown already answers, over the scan
 * (through projections of plain columns only: a filter Spark kept means the scan did not take
 * the whole WHERE). It hands the delegate the aggregation, in the JSON of a pushed one, with
 * the scan's own request (its pushed predicate), and the delegate answers it as it answers a
 * complete pushdown, with {@code Catalog.sql}'s statistics planning, or declines (a FIELD
 * predicate, a TAG or FIELD ordering, a tie Spark would break by the order it meets rows in):
 * then the plan stays as it is and Spark aggregates the rows.
 */
final class ByTimeAggregates {
  private ByTimeAggregates() {}

  /** The statistics answer replacing {@code aggregate}, or null when there is none. */
  static LogicalPlan answer(Aggregate aggregate) {
    LogicalPlan child = aggregate.child();
    while (child instanceof Project) {
      for (NamedExpression item : list(((Project) child).projectList())) {
        if (!(item instanceof Attribute)) {
          return null;
        }
      }
      child = ((Project) child).child();
    }
    if (!(child instanceof DataSourceV2ScanRelation)) {
      return null;
    }
    DataSourceV2ScanRelation relation = (DataSourceV2ScanRelation) child;
    if (!(relation.scan() instanceof TsFileScan)) {
      return null;
    }
    ObjectNode scanRequest = ((TsFileScan) relation.scan()).request();
    if (scanRequest == null || scanRequest.has("limit") || scanRequest.has("time_top")) {
      return null;
    }
    Map<ExprId, String> names = new HashMap<>();
    for (Attribute attribute : list(relation.output())) {
      names.put(attribute.exprId(), attribute.name());
    }
    ObjectNode aggregation = Client.object();
    List<Attribute> output = new ArrayList<>();
    ArrayNode groups = aggregation.putArray("group_by");
    for (Expression expression : list(aggregate.groupingExpressions())) {
      String name = name(expression, names);
      if (name == null || output.contains(expression)) {
        return null;
      }
      groups.add(reference(name));
      output.add((Attribute) expression);
    }
    Map<AggregateExpression, Attribute> results = new LinkedHashMap<>();
    for (NamedExpression item : list(aggregate.aggregateExpressions())) {
      collect((Expression) item, results);
    }
    ArrayNode functions = aggregation.putArray("aggregates");
    boolean byTime = false;
    for (AggregateExpression expression : results.keySet()) {
      ObjectNode function = function(expression, names);
      if (function == null) {
        return null;
      }
      byTime |= function.has("ordering");
      functions.add(function);
    }
    if (!byTime) {
      return null; // Spark offered the rest to the scan's pushdown, which declined it
    }
    ObjectNode request = scanRequest.deepCopy();
    request.remove("columns");
    request.remove("parallelism");
    request.setAll(aggregation);
    request.put("mode", "complete");
    request.putArray("offered").add(aggregation);
    JsonNode reply = Client.call("push_aggregation", request);
    if (reply == null || reply.isNull()) {
      return null;
    }
    StructType schema = (StructType) DataType.fromJson(reply.get("schema").asText());
    output.addAll(results.values());
    if (!sameTypes(schema, output)) {
      return null;
    }
    InternalRow[] rows =
        Aggregates.localScan(schema, reply.get("rows"), reply.path("description").asText())
            .rows();
    LogicalPlan local =
        new LocalRelation(
            CollectionConverters.asScala(output).toSeq(),
            CollectionConverters.asScala(List.of(rows)).toSeq(),
            false,
            Option.empty());
    List<NamedExpression> projected = new ArrayList<>();
    for (NamedExpression item : list(aggregate.aggregateExpressions())) {
      projected.add((NamedExpression) replace((Expression) item, results));
    }
    return new Project(CollectionConverters.asScala(projected).toSeq(), local);
  }

  /** Every aggregate expression in {@code expression}, each with the attribute of its value. */
  private static void collect(Expression expression, Map<AggregateExpression, Attribute> out) {
    if (expression instanceof AggregateExpression) {
      AggregateExpression aggregate = (AggregateExpression) expression;
      out.putIfAbsent(aggregate, aggregate.resultAttribute());
      return;
    }
    for (Expression child : list(expression.children())) {
      collect(child, out);
    }
  }

  private static Expression replace(
      Expression expression, Map<AggregateExpression, Attribute> results) {
    Attribute value = results.get(expression);
    if (value != null) {
      return value;
    }
    return expression.mapChildren(
        new AbstractFunction1<Expression, Expression>() {
          @Override
          public Expression apply(Expression child) {
            return replace(child, results);
          }
        });
  }

  /**
   * An aggregate function over plain columns of the scan in the JSON of a pushed one ({@link
   * Aggregates#toJson}), {@code max_by}/{@code min_by} with their ordering; null for anything
   * else (DISTINCT, FILTER, an expression argument).
   */
  private static ObjectNode function(AggregateExpression expression, Map<ExprId, String> names) {
    if (expression.isDistinct()
        || expression.filter().isDefined()
        || !(expression.mode() instanceof Complete$)) {
      return null;
    }
    AggregateFunction function = expression.aggregateFunction();
    ObjectNode out = Client.object();
    out.put("distinct", false);
    Expression argument;
    if (function instanceof Count) {
      List<Expression> arguments = list(function.children());
      if (arguments.stream().allMatch(ByTimeAggregates::isNonNullLiteral)) {
        out.put("function", "CountStar"); // count(*) and count(1) count every row
        return out;
      }
      if (arguments.size() != 1) {
        return null;
      }
      out.put("function", "Count");
      argument = arguments.get(0);
    } else if (function instanceof Sum) {
      out.put("function", "Sum");
      argument = ((Sum) function).child();
    } else if (function instanceof Average) {
      out.put("function", "Avg");
      argument = ((Average) function).child();
    } else if (function instanceof Min) {
      out.put("function", "Min");
      argument = ((Min) function).child();
    } else if (function instanceof Max) {
      out.put("function", "Max");
      argument = ((Max) function).child();
    } else if (function instanceof MaxBy || function instanceof MinBy) {
      boolean last = function instanceof MaxBy;
      out.put("function", last ? "MaxBy" : "MinBy");
      argument = last ? ((MaxBy) function).valueExpr() : ((MinBy) function).valueExpr();
      Expression ordering =
          last ? ((MaxBy) function).orderingExpr() : ((MinBy) function).orderingExpr();
      String orderedBy = name(ordering, names);
      if (orderedBy == null) {
        return null;
      }
      out.set("ordering", reference(orderedBy));
    } else {
      return null;
    }
    String column = name(argument, names);
    if (column == null) {
      return null;
    }
    out.set("argument", reference(column));
    return out;
  }

  private static boolean isNonNullLiteral(Expression expression) {
    return expression instanceof Literal && ((Literal) expression).value() != null;
  }

  /** The scan column {@code expression} is, or null when it is not one. */
  private static String name(Expression expression, Map<ExprId, String> names) {
    return expression instanceof Attribute ? names.get(((Attribute) expression).exprId()) : null;
  }

  private static ObjectNode reference(String name) {
    ObjectNode out = Client.object();
    out.putArray("ref").add(name);
    return out;
  }

  /** Whether the delegate's rows have the types Spark gives the grouping and aggregates. */
  private static boolean sameTypes(StructType schema, List<Attribute> output) {
    StructField[] fields = schema.fields();
    if (fields.length != output.size()) {
      return false;
    }
    for (int i = 0; i < fields.length; i++) {
      if (!fields[i].dataType().equals(output.get(i).dataType())) {
        return false;
      }
    }
    return true;
  }

  private static <T> List<T> list(scala.collection.Seq<T> seq) {
    return CollectionConverters.asJava(seq);
  }
}
