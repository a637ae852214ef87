package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.ProcedureCatalog;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.StagingTableCatalog;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Spark's {@code TableCatalog} over a tsfile-catalog warehouse: every call is answered by the
 * Python delegate (the registry, the table layer and its checks); this class only translates.
 *
 * <p>Configured as {@code spark.sql.catalog.<name> = io.tsfilecatalog.spark.TsFileCatalog} with
 * {@code spark.sql.catalog.<name>.warehouse}; see docs/spark-catalog.md.
 */
public class TsFileCatalog implements StagingTableCatalog, SupportsNamespaces, ProcedureCatalog {
  private String name;
  private ObjectNode config;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    PluginClasses.load();
    this.name = name;
    this.config = Client.object();
    config.put("name", name);
    config.set("options", Client.map(options.asCaseSensitiveMap()));
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String[] defaultNamespace() {
    return new String[] {"default"};
  }

  ObjectNode request() {
    ObjectNode out = Client.object();
    out.set("catalog", config);
    return out;
  }

  ObjectNode request(Identifier ident) {
    ObjectNode out = request();
    out.set("namespace", Client.strings(ident.namespace()));
    out.put("name", ident.name());
    return out;
  }

  ObjectNode request(String[] namespace) {
    ObjectNode out = request();
    out.set("namespace", Client.strings(namespace));
    return out;
  }

  // -- tables ---------------------------------------------------------------------------------

  @Override
  public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
    JsonNode names = call("list_tables", request(namespace), null, namespace);
    Identifier[] out = new Identifier[names.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = Identifier.of(namespace, names.get(i).asText());
    }
    return out;
  }

  @Override
  public boolean tableExists(Identifier ident) {
    // Whether the name is registered, without loading it (the default loads): DROP TABLE
    // asks first, and a name whose registry entry cannot be read must still be droppable.
    return Client.call("table_exists", request(ident)).asBoolean();
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    return load(ident, request(ident));
  }

  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    ObjectNode request = request(ident);
    request.put("version", version);
    return load(ident, request);
  }

  @Override
  public Table loadTable(Identifier ident, long timestamp) throws NoSuchTableException {
    ObjectNode request = request(ident);
    request.put("timestamp_us", timestamp);
    return load(ident, request);
  }

  private Table load(Identifier ident, ObjectNode request) throws NoSuchTableException {
    // A URL reference's time travel setting is a wall-clock time in the session's zone.
    request.put("time_zone", SQLConf.get().sessionLocalTimeZone());
    JsonNode described =
        call("load_table", request, ident, null, NoSuchTableException.class, null);
    if (described.has("metadata_table")) {
      return new TsFileMetadataTable(described.get("metadata_table"));
    }
    return new TsFileTable(config, ident, described);
  }

  /** The request naming {@code ident} in this catalog (the change feed's, {@link ChangeFeeds}). */
  ObjectNode tableRequest(Identifier ident) {
    return request(ident);
  }

  /** {@code ... FROM t CHANGES FROM VERSION a [TO VERSION b]} (Spark 4.3, SPARK-55948). */
  @Override
  public org.apache.spark.sql.connector.catalog.Changelog loadChangelog(
      Identifier ident,
      org.apache.spark.sql.connector.catalog.ChangelogContext context,
      CaseInsensitiveStringMap options) {
    return TsFileChangelog.load(request(ident), context, options);
  }

  @Override
  public void invalidateTable(Identifier ident) {
    // Nothing is cached here: every loadTable reads the registry and the latest version.
  }

  private static StructType structOf(Column[] columns) {
    StructType schema = new StructType();
    for (Column column : columns) {
      schema = schema.add(new StructField(column.name(), column.dataType(), column.nullable(),
          org.apache.spark.sql.types.Metadata.empty()));
    }
    return schema;
  }

  private static void refusePartitions(Transform[] partitions) {
    if (partitions.length > 0) {
      throw new UnsupportedOperationException(
          "tsfile tables have no PARTITIONED BY: parts are pruned by time, TAG and field "
              + "statistics instead (see docs/spark-catalog.md)");
    }
  }

  @Override
  @SuppressWarnings("deprecation") // Spark 4.2 and 4.3 route CREATE TABLE through this one
  public Table createTable(
      Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    return createTable(ident, structOf(columns), partitions, properties);
  }

  // -- CREATE/REPLACE TABLE ... AS SELECT, saveAsTable, writeTo(...).create() -------------------

  @Override
  @SuppressWarnings("deprecation")
  public StagedTable stageCreate(
      Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    return stage(
        ident,
        structOf(columns),
        partitions,
        properties,
        "create",
        TableAlreadyExistsException.class,
        NoSuchNamespaceException.class);
  }

  @Override
  @SuppressWarnings("deprecation")
  public StagedTable stageReplace(
      Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws NoSuchNamespaceException, NoSuchTableException {
    return stage(
        ident,
        structOf(columns),
        partitions,
        properties,
        "replace",
        NoSuchNamespaceException.class,
        NoSuchTableException.class);
  }

  @Override
  @SuppressWarnings("deprecation")
  public StagedTable stageCreateOrReplace(
      Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws NoSuchNamespaceException {
    return stage(
        ident,
        structOf(columns),
        partitions,
        properties,
        "create_or_replace",
        NoSuchNamespaceException.class,
        null);
  }

  /** A staged create/replace; {@code first} and {@code second}: the failures its mode declares. */
  private <A extends Exception, B extends Exception> StagedTable stage(
      Identifier ident,
      StructType schema,
      Transform[] partitions,
      Map<String, String> properties,
      String mode,
      Class<A> first,
      Class<B> second)
      throws A, B {
    refusePartitions(partitions);
    ObjectNode request = request(ident);
    request.put("mode", mode);
    request.put("schema", schema.json());
    request.set("properties", Client.map(properties));
    JsonNode staged = call("stage", request, ident, null, first, second);
    return new TsFileStagedTable(request, schema, staged);
  }

  @Override
  @SuppressWarnings("deprecation")
  public Table createTable(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    refusePartitions(partitions);
    ObjectNode request = request(ident);
    request.put("schema", schema.json());
    request.set("properties", Client.map(properties));
    JsonNode created =
        call(
            "create_table",
            request,
            ident,
            null,
            TableAlreadyExistsException.class,
            NoSuchNamespaceException.class);
    return new TsFileTable(config, ident, created);
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) throws NoSuchTableException {
    ObjectNode request = request(ident);
    ArrayNode list = request.putArray("changes");
    for (TableChange change : changes) {
      list.add(Changes.toJson(change));
    }
    JsonNode altered =
        call("alter_table", request, ident, null, NoSuchTableException.class, null);
    return new TsFileTable(config, ident, altered);
  }

  @Override
  public boolean dropTable(Identifier ident) {
    return drop(ident, false);
  }

  @Override
  public boolean purgeTable(Identifier ident) {
    return drop(ident, true);
  }

  private boolean drop(Identifier ident, boolean purge) {
    ObjectNode request = request(ident);
    request.put("purge", purge);
    return Client.call("drop_table", request).asBoolean();
  }

  @Override
  public void renameTable(Identifier from, Identifier to)
      throws NoSuchTableException, TableAlreadyExistsException {
    ObjectNode request = request(from);
    request.set("new_namespace", Client.strings(to.namespace()));
    request.put("new_name", to.name());
    try {
      call(
          "rename_table",
          request,
          from,
          null,
          NoSuchTableException.class,
          TableAlreadyExistsException.class);
    } catch (TableAlreadyExistsException e) {
      throw new TableAlreadyExistsException(to); // the new name is the one that exists
    }
  }

  // -- procedures -----------------------------------------------------------------------------

  @Override
  public UnboundProcedure loadProcedure(Identifier ident) {
    ObjectNode request = request(ident);
    return new TsFileProcedure(request, ident.name(), Client.call("describe_procedure", request));
  }

  @Override
  public Identifier[] listProcedures(String[] namespace) {
    JsonNode names = Client.call("list_procedures", request(namespace));
    Identifier[] out = new Identifier[names.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = Identifier.of(namespace, names.get(i).asText());
    }
    return out;
  }

  // -- namespaces -----------------------------------------------------------------------------

  @Override
  public String[][] listNamespaces() throws NoSuchNamespaceException {
    return listNamespaces(new String[0]);
  }

  @Override
  public String[][] listNamespaces(String[] namespace) throws NoSuchNamespaceException {
    JsonNode names = call("list_namespaces", request(namespace), null, namespace);
    String[][] out = new String[names.size()][];
    for (int i = 0; i < out.length; i++) {
      out[i] = Client.toStrings(names.get(i));
    }
    return out;
  }

  @Override
  public boolean namespaceExists(String[] namespace) {
    return Client.call("namespace_exists", request(namespace)).asBoolean();
  }

  @Override
  public Map<String, String> loadNamespaceMetadata(String[] namespace)
      throws NoSuchNamespaceException {
    return Client.toMap(call("namespace_metadata", request(namespace), null, namespace));
  }

  @Override
  public void createNamespace(String[] namespace, Map<String, String> metadata)
      throws NamespaceAlreadyExistsException {
    ObjectNode request = request(namespace);
    request.set("metadata", Client.map(metadata));
    call("create_namespace", request, null, namespace, NamespaceAlreadyExistsException.class, null);
  }

  @Override
  public void alterNamespace(String[] namespace, NamespaceChange... changes)
      throws NoSuchNamespaceException {
    throw new UnsupportedOperationException(
        "ALTER NAMESPACE is not supported by the tsfile catalog: namespaces hold no properties");
  }

  @Override
  public boolean dropNamespace(String[] namespace, boolean cascade)
      throws NoSuchNamespaceException, NonEmptyNamespaceException {
    ObjectNode request = request(namespace);
    request.put("cascade", cascade);
    return call(
            "drop_namespace",
            request,
            null,
            namespace,
            NoSuchNamespaceException.class,
            NonEmptyNamespaceException.class)
        .asBoolean();
  }

  /** A call whose only checked failure is a missing namespace. */
  private static JsonNode call(
      String operation, ObjectNode request, Identifier ident, String[] namespace)
      throws NoSuchNamespaceException {
    return call(operation, request, ident, namespace, NoSuchNamespaceException.class, null);
  }

  /**
   * The one mapping of a call's failures: Spark's exception for the delegate's answer is thrown
   * as this call declares it ({@code first}, {@code second}; either may be null), and any
   * other (a refusal, which Java sees as checked) as it is, undeclared.
   */
  private static <A extends Exception, B extends Exception> JsonNode call(
      String operation,
      ObjectNode request,
      Identifier ident,
      String[] namespace,
      Class<A> first,
      Class<B> second)
      throws A, B {
    try {
      return Client.callChecked(operation, request, ident, namespace);
    } catch (AnalysisException e) {
      if (first != null && first.isInstance(e)) {
        throw first.cast(e);
      }
      if (second != null && second.isInstance(e)) {
        throw second.cast(e);
      }
      // A refusal (Client.refused) or another of Spark's own exceptions: as it is, so that
      // every client prints its one line with its SQLSTATE (an internal error would get a
      // stack trace in spark-sql and beeline).
      throw Client.unchecked(e);
    }
  }
}
