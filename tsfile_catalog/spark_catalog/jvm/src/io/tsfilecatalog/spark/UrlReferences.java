package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.RelationTimeTravel;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.analysis.UnresolvedTableValuedFunction;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedArgumentExpression;
import org.apache.spark.sql.catalyst.plans.logical.InsertIntoStatement;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code tsfile('<url>', version => …)} and {@code tsfile.`<url>`} in plain {@code spark.sql}:
 * each becomes a relation of a tsfile catalog of the session, named by the reference's text,
 * which Spark then loads from that catalog and reads through the plugin's own scan (pruning,
 * pushdown, statistics answers), as a registered table.
 *
 * <p>Spark knows neither form: {@code tsfile} is no table function of its, and its "SQL on
 * files" rule refuses a Python data source. This rule runs with the hint rules, after CTEs are
 * substituted and before relations are resolved; a subquery's plan is analysed with the same
 * batches, so it is rewritten there. Python decides ({@code url_reference}): whether the text is
 * a URL reference ({@code tsfile.t} stays table {@code t} of database {@code tsfile}), which
 * catalog reads it, and the malformed reference's message.
 */
final class UrlReferences extends Rule<LogicalPlan> {
  private static final String FUNCTION = "tsfile";
  private final SparkSession session;

  UrlReferences(SparkSession session) {
    this.session = session;
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    return Plans.replaceDown(plan, this::replacement);
  }

  /** The relation {@code node} stands for, or null when it is no URL reference. */
  private LogicalPlan replacement(LogicalPlan node) {
    if (node instanceof RelationTimeTravel) {
      // VERSION AS OF / TIMESTAMP AS OF holds its relation outside its children.
      RelationTimeTravel travel = (RelationTimeTravel) node;
      LogicalPlan relation = replacement(travel.relation());
      return relation == null
          ? null
          : new RelationTimeTravel(relation, travel.timestamp(), travel.version());
    }
    if (node instanceof InsertIntoStatement) {
      // INSERT's table is no child either: a URL reference there gets Catalog.sql's refusal.
      LogicalPlan table = ((InsertIntoStatement) node).table();
      String text = table instanceof UnresolvedRelation ? text((UnresolvedRelation) table) : null;
      if (text != null) {
        ask(text, true, false);
      }
      return null;
    }
    String text = null;
    boolean sessionsFunction = false;
    boolean streaming = false;
    org.apache.spark.sql.util.CaseInsensitiveStringMap options = null;
    if (node instanceof UnresolvedRelation) {
      UnresolvedRelation relation = (UnresolvedRelation) node;
      text = text(relation);
      streaming = relation.isStreaming();
      options = relation.options();
    } else if (node instanceof UnresolvedTableValuedFunction) {
      UnresolvedTableValuedFunction function = (UnresolvedTableValuedFunction) node;
      List<String> name = CollectionConverters.asJava(function.name());
      if (name.size() == 1 && name.get(0).equalsIgnoreCase(FUNCTION)) {
        text = call(CollectionConverters.asJava(function.functionArgs()));
        streaming = function.isStreaming();
        sessionsFunction = functionExists();
      }
    }
    if (text == null) {
      return null;
    }
    JsonNode found = ask(text, false, sessionsFunction);
    if (found == null || found.isNull()) {
      return null;
    }
    List<String> identifier = new ArrayList<>();
    identifier.add(found.get("catalog").asText());
    identifier.add(found.get("name").asText());
    return new UnresolvedRelation(
        CollectionConverters.asScala(identifier).toSeq(),
        options != null
            ? options
            : org.apache.spark.sql.util.CaseInsensitiveStringMap.empty(),
        streaming);
  }

  /** {@code tsfile.`<x>`}'s text, or null when {@code relation} is not named so. */
  private static String text(UnresolvedRelation relation) {
    List<String> parts = CollectionConverters.asJava(relation.multipartIdentifier());
    if (parts.size() == 2 && parts.get(0).equalsIgnoreCase(FUNCTION)) {
      return FUNCTION + ".`" + parts.get(1).replace("`", "``") + "`";
    }
    return null;
  }

  /**
   * The delegate's answer for reference {@code text}: null when there is no tsfile catalog in
   * the session (Spark's own error follows) or the text is no URL reference.
   */
  private JsonNode ask(String text, boolean write, boolean sessionsFunction) {
    ArrayNode catalogs = StatementParser.catalogs(session);
    if (catalogs.isEmpty()) {
      return null;
    }
    ObjectNode request = Client.object();
    request.put("text", text);
    request.put("write", write);
    request.put("sessions_function", sessionsFunction);
    request.set("catalogs", catalogs);
    request.put("current", session.sessionState().catalogManager().currentCatalog().name());
    return Client.call("url_reference", request);
  }

  /** Whether the session has a function of its own named {@code tsfile} (Python decides). */
  private boolean functionExists() {
    try {
      return session.catalog().functionExists(FUNCTION);
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** The call's SQL text, each argument as Spark prints it (Python parses it). */
  private static String call(List<Expression> args) {
    List<String> shown = new ArrayList<>();
    for (Expression arg : args) {
      if (arg instanceof NamedArgumentExpression) {
        NamedArgumentExpression named = (NamedArgumentExpression) arg;
        shown.add("`" + named.key().replace("`", "``") + "` => " + sql(named.value()));
      } else {
        shown.add(sql(arg));
      }
    }
    return FUNCTION + "(" + String.join(", ", shown) + ")";
  }

  private static String sql(Expression expression) {
    try {
      return expression.sql();
    } catch (RuntimeException e) {
      // An unresolved expression Spark cannot print: Python says what the call expects.
      return expression.toString();
    }
  }
}
